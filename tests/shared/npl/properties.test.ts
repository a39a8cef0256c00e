import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NplExpr } from '../../../shared/npl/condition/ast.js';
import {
  compileCondition,
  compilePolicy,
  EU_AI_ACT_ART5_PROHIBITED,
  evaluatePolicy,
  NATO_PROU_STRICT_FINANCIAL,
  parseCondition,
  printCondition,
  safeParsePolicy,
} from '../../../shared/npl/index.js';
import { propertyRuns } from '../../support/property-runs.js';

const ROOTS = ['tool', 'args', 'agentRole', 'agent', 'server', 'method', 'tenant', 'mode'];
const SEGMENTS = ['name', 'args', 'x', 'amount', 'in', 'true', '0', '12', '__proto__', 'toString'];

const json = fc.jsonValue({ maxDepth: 4 });
const context = fc.oneof(
  fc.record(
    {
      tool: fc.oneof(json, fc.record({ name: fc.string(), args: json }, { requiredKeys: [] })),
      args: json,
      agentRole: fc.oneof(fc.constantFrom('trader', '*', ''), json),
      agent: json,
      method: json,
      mode: json,
    },
    { requiredKeys: [] },
  ),
  json,
);

// ASTs in the shape the parser produces (n-ary and/or without direct nesting, compare operands
// at unary level, lists only after `in`), positions zeroed.
const P = { pos: 0 } as const;
const literal = fc
  .oneof(
    fc.string({ maxLength: 6 }).filter((s) => !(s.includes("'") && s.includes('"'))),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  )
  .map((value): NplExpr => ({ kind: 'literal', value, ...P }));
const path = fc
  .tuple(fc.constantFrom(...ROOTS), fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 3 }))
  .map(([root, segments]): NplExpr => ({ kind: 'path', root, segments, ...P }));
const pathNode = path as fc.Arbitrary<Extract<NplExpr, { kind: 'path' }>>;

const { expr } = fc.letrec((tie) => {
  const unary = (): fc.Arbitrary<NplExpr> =>
    fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      literal,
      path,
      tie('group') as fc.Arbitrary<NplExpr>,
      (tie('unary') as fc.Arbitrary<NplExpr>).map((e): NplExpr => ({ kind: 'not', expr: e, ...P })),
      fc
        .tuple(
          pathNode,
          fc.constantFrom('contains', 'startsWith', 'endsWith'),
          fc.string({ maxLength: 4 }),
        )
        .filter(([, , s]) => !(s.includes("'") && s.includes('"')))
        .map(
          ([target, method, s]): NplExpr => ({
            kind: 'call',
            target: target.segments.length > 0 ? target : { ...target, segments: ['x'] },
            method,
            arg: { kind: 'literal', value: s, ...P },
            pos: 0,
          }),
        ),
    );
  const comparison = fc.oneof(
    tie('unary') as fc.Arbitrary<NplExpr>,
    fc
      .tuple(
        tie('unary') as fc.Arbitrary<NplExpr>,
        fc.constantFrom('==', '!='),
        tie('unary') as fc.Arbitrary<NplExpr>,
      )
      .map(([left, op, right]): NplExpr => ({ kind: 'compare', op, left, right, ...P })),
    fc
      .tuple(
        tie('unary') as fc.Arbitrary<NplExpr>,
        fc.array(fc.oneof(literal, path), { maxLength: 3 }),
      )
      .map(
        ([left, items]): NplExpr => ({
          kind: 'in',
          left,
          list: { kind: 'list', items, pos: 0 },
          ...P,
        }),
      ),
  );
  const and = fc
    .array(comparison, { minLength: 1, maxLength: 3 })
    .map((ops): NplExpr => (ops.length === 1 ? ops[0]! : { kind: 'and', operands: ops, ...P }));
  return {
    unary: unary(),
    group: fc
      .constant(null)
      .chain(() =>
        (tie('expr') as fc.Arbitrary<NplExpr>).map(
          (e): NplExpr => ({ kind: 'group', expr: e, ...P }),
        ),
      ),
    expr: fc
      .array(and, { minLength: 1, maxLength: 3 })
      .map((ops): NplExpr => (ops.length === 1 ? ops[0]! : { kind: 'or', operands: ops, ...P })),
  };
});

function withoutPositions(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === 'pos' ? undefined : v)));
}

describe('properties', () => {
  it('printing an AST and parsing it again gives the same AST', () => {
    fc.assert(
      fc.property(expr, (ast) => {
        const text = printCondition(ast);
        const parsed = parseCondition(text);
        if (!parsed.ok) {
          // Only static checks may fail (e.g. ordering against a non-numeric literal).
          expect(parsed.problems.every((p) => p.code !== 'condition_syntax')).toBe(true);
          return;
        }
        expect(withoutPositions(parsed.ast)).toEqual(withoutPositions(ast));
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('evaluation is deterministic and never throws on arbitrary JSON contexts', () => {
    const compiled = [NATO_PROU_STRICT_FINANCIAL, EU_AI_ACT_ART5_PROHIBITED].map(compilePolicy);
    fc.assert(
      fc.property(expr, context, (ast, ctx) => {
        const text = printCondition(ast);
        let test: ((c: object) => boolean) | undefined;
        try {
          test = compileCondition(text);
        } catch {
          return;
        }
        const first = test(ctx as object);
        expect(typeof first).toBe('boolean');
        expect(test(structuredClone(ctx) as object)).toBe(first);
        for (const policy of compiled) {
          expect(evaluatePolicy(policy, ctx as object)).toEqual(
            evaluatePolicy(policy, structuredClone(ctx) as object),
          );
        }
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('arbitrary strings never crash the condition parser: a result or issues', () => {
    const tokens = fc.constantFrom(
      'tool',
      '.',
      'name',
      '==',
      "'a'",
      '(',
      ')',
      '[',
      ']',
      ',',
      '&&',
      '||',
      '!',
      'in',
      '1',
      '-',
      '"',
      "'",
      ' ',
      'contains',
      'matches',
    );
    const source = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.array(tokens, { maxLength: 20 }).map((t) => t.join('')),
    );
    fc.assert(
      fc.property(source, (src) => {
        const result = parseCondition(src);
        if (!result.ok) expect(result.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('arbitrary text and JSON never crash the document parser', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), json), (source) => {
        const result = safeParsePolicy(source as string | object);
        if (!result.success) expect(result.error.issues.length).toBeGreaterThan(0);
      }),
      { numRuns: propertyRuns(1000) },
    );
  });
});
