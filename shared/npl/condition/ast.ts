// The condition AST. `pos` is the offset of the node's first character in the condition text;
// it only serves error messages (printing ignores it). `and`/`or` are n-ary so that long chains
// neither recurse deeply when compiled nor when evaluated.

export const NPL_CONTEXT_ROOTS = [
  'tool',
  'args',
  'agentRole',
  'agent',
  'server',
  'method',
  'tenant',
  'mode',
  'delegation',
  // The window's values of the usage limits the call matches (docs/limits.md).
  'usage',
  'payload',
] as const;
export type NplContextRoot = (typeof NPL_CONTEXT_ROOTS)[number];

export const NPL_METHODS = ['contains', 'startsWith', 'endsWith', 'matches'] as const;
export type NplMethod = (typeof NPL_METHODS)[number];

export const NPL_COMPARE_OPS = ['==', '!=', '<', '<=', '>', '>='] as const;
export type NplCompareOp = (typeof NPL_COMPARE_OPS)[number];

export type NplLiteralValue = string | number | boolean | null;

export interface LiteralNode {
  readonly kind: 'literal';
  readonly value: NplLiteralValue;
  readonly pos: number;
}
export interface PathNode {
  readonly kind: 'path';
  readonly root: string;
  /** Segments after the root: `tool.args.x` is root `tool`, segments `['args', 'x']`. */
  readonly segments: readonly string[];
  readonly pos: number;
}
export interface ListNode {
  readonly kind: 'list';
  readonly items: readonly NplExpr[];
  readonly pos: number;
}
export interface GroupNode {
  readonly kind: 'group';
  readonly expr: NplExpr;
  readonly pos: number;
}
export interface NotNode {
  readonly kind: 'not';
  readonly expr: NplExpr;
  readonly pos: number;
}
export interface LogicalNode {
  readonly kind: 'and' | 'or';
  readonly operands: readonly NplExpr[];
  readonly pos: number;
}
export interface CompareNode {
  readonly kind: 'compare';
  readonly op: NplCompareOp;
  readonly left: NplExpr;
  readonly right: NplExpr;
  readonly pos: number;
}
export interface InNode {
  readonly kind: 'in';
  readonly left: NplExpr;
  readonly list: ListNode;
  readonly pos: number;
}
export interface CallNode {
  readonly kind: 'call';
  readonly target: PathNode;
  readonly method: string;
  readonly arg: NplExpr;
  readonly pos: number;
}

export type NplExpr =
  | LiteralNode
  | PathNode
  | ListNode
  | GroupNode
  | NotNode
  | LogicalNode
  | CompareNode
  | InNode
  | CallNode;

/** An empty (blank) condition: the reference evaluator treats it as `false`. */
export interface EmptyCondition {
  readonly kind: 'empty';
  readonly pos: 0;
}

export type NplConditionAst = NplExpr | EmptyCondition;
