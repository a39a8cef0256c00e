// The context roots a condition reads (`tool`, `args`, `usage`…): what the data plane must
// provide before evaluating it. Reading `usage` costs a database read per call (docs/limits.md),
// so the gateway does that read only for tenants whose pinned policies name it.
import type { NplConditionAst, NplExpr } from './ast.js';

/** Adds every root of a path in `ast` to `roots`. */
export function collectPathRoots(ast: NplConditionAst | NplExpr, roots: Set<string>): void {
  switch (ast.kind) {
    case 'path':
      roots.add(ast.root);
      return;
    case 'list':
      for (const item of ast.items) collectPathRoots(item, roots);
      return;
    case 'group':
    case 'not':
      collectPathRoots(ast.expr, roots);
      return;
    case 'and':
    case 'or':
      for (const operand of ast.operands) collectPathRoots(operand, roots);
      return;
    case 'compare':
      collectPathRoots(ast.left, roots);
      collectPathRoots(ast.right, roots);
      return;
    case 'in':
      collectPathRoots(ast.left, roots);
      collectPathRoots(ast.list, roots);
      return;
    case 'call':
      roots.add(ast.target.root);
      collectPathRoots(ast.arg, roots);
      return;
    default:
      return;
  }
}
