// AST → condition text. Parsing the output gives the same AST (positions aside), which the
// property tests check. Strings have no escapes, so a string holding both quote characters
// cannot be printed; `printCondition` throws for such a (hand-built) AST.
import type { NplConditionAst, NplExpr, NplLiteralValue } from './ast.js';

function printLiteral(value: NplLiteralValue): string {
  if (typeof value === 'string') {
    if (!value.includes("'")) return `'${value}'`;
    if (!value.includes('"')) return `"${value}"`;
    throw new Error('a string holding both quote characters cannot be written in NPL');
  }
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return String(value);
}

function printExpr(node: NplExpr): string {
  switch (node.kind) {
    case 'literal':
      return printLiteral(node.value);
    case 'path':
      return [node.root, ...node.segments].join('.');
    case 'list':
      return `[${node.items.map(printExpr).join(', ')}]`;
    case 'group':
      return `(${printExpr(node.expr)})`;
    case 'not':
      return `!${printExpr(node.expr)}`;
    case 'and':
      return node.operands.map(printExpr).join(' && ');
    case 'or':
      return node.operands.map(printExpr).join(' || ');
    case 'compare':
      return `${printExpr(node.left)} ${node.op} ${printExpr(node.right)}`;
    case 'in':
      return `${printExpr(node.left)} in ${printExpr(node.list)}`;
    case 'call':
      return `${printExpr(node.target)}.${node.method}(${printExpr(node.arg)})`;
  }
}

export function printCondition(ast: NplConditionAst): string {
  return ast.kind === 'empty' ? '' : printExpr(ast);
}
