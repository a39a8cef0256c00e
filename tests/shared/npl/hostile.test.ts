import { describe, expect, it } from 'vitest';
import {
  compileCondition,
  compilePolicy,
  evaluatePolicy,
  NATO_PROU_STRICT_FINANCIAL,
  type NplContext,
  parsePolicy,
} from '../../../shared/npl/index.js';

function elapsed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

describe('hostile inputs finish in bounded time', () => {
  it('deeply nested arguments (100 000 levels) are not walked beyond the path', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = { a: deep, list: [deep] };
    const ctx = { tool: { name: 'wire_transfer', args: deep }, args: deep } as NplContext;
    const nato = compilePolicy(NATO_PROU_STRICT_FINANCIAL);
    const contains = compileCondition("args.a.contains('x') || args.list.contains('x')");
    const time = elapsed(() => {
      expect(evaluatePolicy(nato, ctx).action).toBe('ALLOW');
      expect(contains(ctx)).toBe(false);
      expect(compileCondition('args.list > 1')(ctx)).toBe(false);
    });
    expect(time).toBeLessThan(10_000);
  });

  it('10 MB strings are scanned in linear time by every string operation', () => {
    const big = 'a'.repeat(10 * 1024 * 1024);
    const ctx = { tool: { name: big }, args: { text: big }, payload: big };
    const conditions = [
      "payload.contains('needle')",
      "args.text.startsWith('b') || args.text.endsWith('b')",
      "args.text.matches('^(a+)+$x')",
      "args.text.matches('(a|aa)*b')",
      "tool.name in ['drop_table']",
      'args.text > 5',
    ];
    for (const src of conditions) {
      const test = compileCondition(src);
      expect(elapsed(() => expect(test(ctx)).toBe(false))).toBeLessThan(10_000);
    }
  });

  it('a 10 000-rule policy parses, compiles and evaluates in bounded time', () => {
    const rules = Array.from({ length: 10_000 }, (_, i) => ({
      ruleId: `rule_${i}`,
      action: 'BLOCK',
      condition: `tool.name == 'tool_${i}' && args.amount > ${i}`,
      alertSeverity: 'LOW',
    }));
    const doc = { version: '1.0.0', policyName: 'huge', targetAgents: ['*'], rules };
    let compiled: ReturnType<typeof compilePolicy> | undefined;
    const build = elapsed(() => {
      compiled = compilePolicy(parsePolicy(JSON.stringify(doc)));
    });
    expect(build).toBeLessThan(20_000);
    const run = elapsed(() => {
      for (let i = 0; i < 100; i++) {
        expect(
          evaluatePolicy(compiled!, { tool: { name: 'tool_9999' }, args: { amount: 1e9 } }).ruleId,
        ).toBe('rule_9999');
      }
    });
    expect(run).toBeLessThan(10_000);
  }, 60_000);

  it('a condition that is one long && chain neither overflows the stack nor slows down', () => {
    const src = Array.from({ length: 4000 }, (_, i) => `args.a${i} == ${i}`).join(' && ');
    const ctx = { args: Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`a${i}`, i])) };
    expect(compileCondition(src)(ctx)).toBe(true);
  });

  it('YAML alias bombs are refused', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    ].join('\n');
    expect(() => parsePolicy(bomb)).toThrowError(
      expect.objectContaining({ code: 'NPL_INVALID_DOCUMENT' }),
    );
  });
});
