import { describe, expect, it } from 'vitest';
import {
  compileCondition,
  evaluateCondition,
  NplError,
  type NplIssue,
  parseCondition,
} from '../../../shared/npl/index.js';

function issuesOf(src: string): NplIssue[] {
  try {
    compileCondition(src);
  } catch (error) {
    expect(error).toBeInstanceOf(NplError);
    expect((error as NplError).code).toBe('NPL_INVALID_CONDITION');
    return [...(error as NplError).issues];
  }
  throw new Error(`expected ${src} to be rejected`);
}

const ev = (src: string, ctx: object) => evaluateCondition(src, ctx);

describe('compatibility with the reference evaluator', () => {
  it('== and != are strict (===): no type coercion', () => {
    expect(ev('args.n == 10', { args: { n: 10 } })).toBe(true);
    expect(ev("args.n == '10'", { args: { n: 10 } })).toBe(false);
    expect(ev("args.n != '10'", { args: { n: 10 } })).toBe(true);
    expect(ev('args.a == args.b', { args: { a: 'x', b: 'x' } })).toBe(true);
  });

  it('ordering operators convert both sides like Number() and are false on NaN', () => {
    expect(ev("args.n > '9'", { args: { n: '10' } })).toBe(true);
    expect(ev('args.n > 9', { args: { n: ' 10 ' } })).toBe(true);
    expect(ev('args.n >= 0', { args: { n: null } })).toBe(true); // Number(null) is 0
    expect(ev('args.n >= 0', { args: { n: '' } })).toBe(true); // Number('') is 0
    expect(ev('args.n > 0', { args: { n: true } })).toBe(true);
    expect(ev('args.n > 4', { args: { n: [5] } })).toBe(true); // Number([5]) is 5
    expect(ev('args.n < 1', { args: { n: [] } })).toBe(true); // Number([]) is 0
    expect(ev('args.n < 100', { args: { n: 'abc' } })).toBe(false);
    expect(ev('args.n >= 100', { args: { n: 'abc' } })).toBe(false);
    expect(ev('args.n < 100', { args: {} })).toBe(false); // undefined is NaN
  });

  it('an ordering against a non-numeric string is false for every value, as in the reference', () => {
    const values: unknown[] = [5, -1, 0, 1e308, 'abc', 'abd', '', '7', true, null, [], [5], {}];
    for (const op of ['<', '<=', '>', '>=']) {
      for (const src of [`args.n ${op} 'abc'`, `'abc' ${op} args.n`, `args.a.b ${op} "zzz"`]) {
        for (const n of values) {
          expect(ev(src, { args: { n, a: { b: n } } }), `${src} with ${JSON.stringify(n)}`).toBe(
            false,
          );
        }
        expect(ev(src, { args: {} }), `${src} on a missing path`).toBe(false);
        expect(ev(src, {}), `${src} without args`).toBe(false);
      }
    }
    expect(ev("'abc' < 'abd'", {})).toBe(false); // no string ordering, unlike JavaScript
    expect(ev("!(args.n > 'abc')", { args: { n: 5 } })).toBe(true);
    expect(ev('args.n < 100', { args: { n: { a: 1 } } })).toBe(false);
    expect(ev('args.n > 15', { args: { n: '0x10' } })).toBe(true);
  });

  it('a bare path is its JavaScript truthiness', () => {
    expect(ev('args.flag', { args: { flag: true } })).toBe(true);
    expect(ev('args.flag', { args: { flag: 'no' } })).toBe(true);
    expect(ev('args.flag', { args: { flag: 0 } })).toBe(false);
    expect(ev('args.flag', { args: { flag: '' } })).toBe(false);
    expect(ev('args.flag', { args: { flag: [] } })).toBe(true);
    expect(ev('args.flag', { args: {} })).toBe(false);
  });

  it('in is === membership, and a list on the left matches if any element is in the list', () => {
    expect(ev("tool.name in ['a', 'b']", { tool: { name: 'b' } })).toBe(true);
    expect(ev("tool.name in ['a', 'b']", { tool: { name: 'c' } })).toBe(false);
    expect(ev('args.n in [1, 2]', { args: { n: '1' } })).toBe(false);
    expect(ev("args.tags in ['x', 'pii']", { args: { tags: ['a', 'pii'] } })).toBe(true);
    expect(ev("args.tags in ['x']", { args: { tags: ['a'] } })).toBe(false);
    expect(ev('args.n in []', { args: { n: 1 } })).toBe(false);
    expect(ev('args.n in [args.m, 3]', { args: { n: 'v', m: 'v' } })).toBe(true);
  });

  it('contains is a case-insensitive substring test on String(value)', () => {
    expect(ev("payload.contains('PII')", { payload: 'export customer pii records' })).toBe(true);
    expect(ev("payload.contains('pii')", { payload: 'NO' })).toBe(false);
    expect(ev("payload.contains('')", {})).toBe(true); // String(undefined ?? '') is ''
    expect(ev("payload.contains('x')", {})).toBe(false);
    expect(ev('payload.contains(12)', { payload: 'a12b' })).toBe(true);
    expect(ev("args.contains('object')", { args: { a: 1 } })).toBe(true); // '[object Object]'
    expect(ev("args.tags.contains('B,C')", { args: { tags: ['a', 'b', 'c'] } })).toBe(true);
    expect(ev('payload.contains(args.word)', { payload: 'undefined behaviour', args: {} })).toBe(
      true,
    );
  });

  it('a missing path is undefined', () => {
    expect(ev('args.missing == args.other', { args: {} })).toBe(true);
    expect(ev('tool.name != 5', {})).toBe(true);
  });

  it('args.a.b falls back to the dotted key "a.b" of args when the walk finds nothing', () => {
    expect(ev('args.a.b == 1', { args: { 'a.b': 1 } })).toBe(true);
    expect(ev('args.a.b == 1', { args: { a: { b: 1 }, 'a.b': 2 } })).toBe(true);
    expect(ev('tool.args.a.b == 1', { tool: { args: { 'a.b': 1 } } })).toBe(true);
  });

  it('a parenthesised expression is a boolean', () => {
    expect(ev("(tool.name) == 'x'", { tool: { name: 'x' } })).toBe(false);
    expect(ev('(tool.name) == true', { tool: { name: 'x' } })).toBe(true);
    expect(ev("(tool.name == 'x') < 2", { tool: { name: 'x' } })).toBe(true); // Number(true) is 1
  });

  it('strings have no escapes and may use either quote', () => {
    expect(ev("args.p == 'C:\\temp'", { args: { p: 'C:\\temp' } })).toBe(true);
    expect(ev(`args.q == "it's"`, { args: { q: "it's" } })).toBe(true);
    expect(ev(`args.q == 'say "hi"'`, { args: { q: 'say "hi"' } })).toBe(true);
  });

  it('numbers are decimal: leading zeros and a trailing dot are accepted', () => {
    expect(ev('args.n == 7', { args: { n: 7 } })).toBe(true);
    expect(ev('args.n == 007', { args: { n: 7 } })).toBe(true);
    expect(ev('args.n == 3.', { args: { n: 3 } })).toBe(true);
    expect(ev('args.n == 2.50', { args: { n: 2.5 } })).toBe(true);
  });

  it('a blank condition is false', () => {
    expect(ev('   ', { tool: { name: 'x' } })).toBe(false);
  });

  it('ignores the keyword in as a path segment after a dot', () => {
    expect(ev('args.in == 1', { args: { in: 1 } })).toBe(true);
  });
});

describe('extensions', () => {
  it('|| and ! with JavaScript precedence (! binds tightest, && before ||)', () => {
    const ctx = { tool: { name: 'b' }, args: { x: 1 } };
    expect(ev("tool.name == 'a' || tool.name == 'b'", ctx)).toBe(true);
    expect(ev("tool.name == 'a' || tool.name == 'b' && args.x == 2", ctx)).toBe(false);
    expect(ev("(tool.name == 'a' || tool.name == 'b') && args.x == 1", ctx)).toBe(true);
    expect(ev('!args.missing', ctx)).toBe(true);
    expect(ev("!(tool.name == 'b')", ctx)).toBe(false);
    expect(ev('!!args.x', ctx)).toBe(true);
  });

  it('true, false and null are literals', () => {
    expect(ev('args.flag == true', { args: { flag: true } })).toBe(true);
    expect(ev('args.flag == false', { args: { flag: false } })).toBe(true);
    expect(ev('args.v == null', { args: { v: null } })).toBe(true);
    expect(ev('args.v == null', { args: {} })).toBe(false);
    expect(ev('true', {})).toBe(true);
  });

  it('negative numbers and exponents', () => {
    expect(ev('args.n < -1.5', { args: { n: -2 } })).toBe(true);
    expect(ev('args.n >= 1e3', { args: { n: 1000 } })).toBe(true);
    expect(ev('args.n == 2.5E-1', { args: { n: 0.25 } })).toBe(true);
  });

  it('deep paths, numeric segments and every context root', () => {
    const ctx = {
      args: { a: { b: { c: 'deep' } }, items: [{ name: 'first' }] },
      agent: { id: 'agent-1' },
      server: { id: 'srv' },
      tenant: { id: 't1' },
      method: 'tools/call',
      mode: 'production',
      agentRole: 'trader',
    };
    expect(ev("args.a.b.c == 'deep'", ctx)).toBe(true);
    expect(ev("args.items.0.name == 'first'", ctx)).toBe(true);
    expect(
      ev(
        "agent.id == 'agent-1' && server.id == 'srv' && tenant.id == 't1' && method == 'tools/call' && mode == 'production' && agentRole == 'trader'",
        ctx,
      ),
    ).toBe(true);
  });

  it('startsWith and endsWith are case-sensitive and false on non-strings', () => {
    const ctx = { tool: { name: 'db_drop' }, args: { n: 12 } };
    expect(ev("tool.name.startsWith('db_')", ctx)).toBe(true);
    expect(ev("tool.name.startsWith('DB_')", ctx)).toBe(false);
    expect(ev("tool.name.endsWith('drop')", ctx)).toBe(true);
    expect(ev("args.n.startsWith('1')", ctx)).toBe(false);
  });

  it('matches tests a linear-time regex, unanchored unless ^ or $ are used', () => {
    const ctx = { args: { email: 'ops@example.com', path: '/etc/passwd' } };
    expect(ev("args.email.matches('^[a-z]+@example\\.com$')", ctx)).toBe(true);
    expect(ev("args.path.matches('passwd')", ctx)).toBe(true);
    expect(ev("args.path.matches('^passwd')", ctx)).toBe(false);
    expect(ev("args.missing.matches('.*')", ctx)).toBe(false);
  });
});

describe('prototype segments', () => {
  const probes = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'length'];

  it('resolve to undefined unless they are own properties', () => {
    for (const seg of probes.slice(0, 5)) {
      expect(ev(`args.${seg}`, { args: {} })).toBe(false);
      expect(ev(`args.${seg} == null`, { args: {} })).toBe(false);
      expect(ev(`tool.name.${seg}`, { tool: { name: 'x' } })).toBe(false);
      expect(ev(`args.a.${seg}`, { args: { a: [] } })).toBe(false);
      expect(ev(`args.${seg}.contains('function')`, { args: {} })).toBe(false);
    }
  });

  it('are read when they are own properties of the data', () => {
    const args = JSON.parse('{"__proto__": "own", "constructor": "c", "toString": "t"}');
    expect(ev("args.__proto__ == 'own'", { args })).toBe(true);
    expect(ev("args.constructor == 'c'", { args })).toBe(true);
    expect(ev("args.toString == 't'", { args })).toBe(true);
  });

  it('do not see a polluted Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.pollutedFlag = true;
    try {
      expect(ev('args.pollutedFlag', { args: {} })).toBe(false);
      expect(ev('args.x.pollutedFlag', { args: { x: {} } })).toBe(false);
    } finally {
      delete proto.pollutedFlag;
    }
  });

  it('do not descend into strings (no .length of a string)', () => {
    expect(ev('tool.name.length > 0', { tool: { name: 'abc' } })).toBe(false);
    expect(ev('args.list.length == 2', { args: { list: [1, 2] } })).toBe(true); // own on arrays
  });

  it('never call toString or valueOf of data objects', () => {
    const args = JSON.parse('{"o": {"toString": 1, "valueOf": 2}}');
    expect(ev('args.o > 1', { args })).toBe(false);
    expect(ev("args.o.contains('object')", { args })).toBe(true);
  });
});

describe('static checks', () => {
  it('rejects an unknown root identifier with a suggestion', () => {
    const [issue] = issuesOf("tools.name == 'x'");
    expect(issue).toMatchObject({ code: 'unknown_identifier', line: 1, column: 1 });
    expect(issue?.hint).toContain("did you mean 'tool'");
  });

  it('rejects a list compared with an ordering operator or ==', () => {
    expect(issuesOf('args.n < [1, 2]')[0]).toMatchObject({ code: 'invalid_operand', column: 10 });
    expect(issuesOf('[1] == args.n')[0]?.code).toBe('invalid_operand');
    expect(issuesOf("args.n in [['a']]")[0]?.code).toBe('invalid_operand');
  });

  it('accepts ordering against a non-numeric string literal, as the reference does, with a warning', () => {
    const parsed = parseCondition("args.n > 'abc'");
    expect(parsed.ok).toBe(true);
    expect(parsed.warnings).toEqual([
      {
        code: 'always_false',
        offset: 9,
        message: "> compares numbers, and 'abc' is not a number: always false",
        hint: 'use == or a string method for text',
      },
    ]);
    expect(() => compileCondition("args.n > 'abc'")).not.toThrow();
    expect(parseCondition("'x' <= args.n").warnings.map((w) => w.offset)).toEqual([0]);
  });

  it('warns about nothing when the string literal is numeric or the operator is == / !=', () => {
    for (const src of ["args.n > '10'", "args.n < ''", "args.n == 'abc'", "args.n != 'abc'"]) {
      expect(parseCondition(src)).toMatchObject({ ok: true, warnings: [] });
    }
  });

  it('keeps the warnings of a condition that has errors too', () => {
    const parsed = parseCondition("foo == 1 && args.n < 'abc'");
    expect(parsed.ok).toBe(false);
    expect(parsed.warnings.map((w) => w.code)).toEqual(['always_false']);
  });

  it('rejects unknown methods and non-literal arguments where a literal is required', () => {
    expect(issuesOf("tool.name.startswith('a')")[0]).toMatchObject({ code: 'unknown_method' });
    expect(issuesOf('tool.name.matches(args.p)')[0]?.code).toBe('invalid_operand');
  });

  it('rejects a malformed or super-linear regex', () => {
    expect(issuesOf("args.x.matches('(a')")[0]?.code).toBe('invalid_regex');
    expect(issuesOf("args.x.matches('(a)\\1')")[0]?.message).toContain('backreference');
    expect(issuesOf("args.x.matches('a(?=b)')")[0]?.message).toContain('lookaround');
  });

  it('reports every static problem at once', () => {
    const issues = issuesOf("foo == 1 && bar > 'x' && tool.name.nope('a')");
    expect(issues.map((i) => i.code)).toEqual([
      'unknown_identifier',
      'unknown_identifier',
      'unknown_method',
    ]);
  });

  it('reports syntax errors with line, column and a caret excerpt', () => {
    const [issue] = issuesOf("tool.name == 'a' &&\n  args.x = 1");
    expect(issue).toMatchObject({ code: 'condition_syntax', line: 2, column: 10 });
    expect(issue?.hint).toBe('use == for equality');
    expect(issue?.excerpt).toBe('  args.x = 1\n         ^');
  });

  it('rejects inputs the reference tolerates by accident', () => {
    for (const src of [
      "tool.name == 'unterminated",
      '(args.x == 1',
      "tool.name in 'a'",
      "args.n in ['a' 'b']",
      "tool.name.contains('a'",
      'args.n == 1.2.3',
      'args.x == 1 == 2',
    ]) {
      expect(issuesOf(src)[0]?.code).toBe('condition_syntax');
    }
  });

  it('limits nesting depth and length', () => {
    expect(issuesOf(`${'('.repeat(100)}true${')'.repeat(100)}`)[0]?.code).toBe('limit_exceeded');
    expect(issuesOf(`${'!'.repeat(100)}true`)[0]?.code).toBe('limit_exceeded');
    expect(issuesOf(`args.x == '${'a'.repeat(100_001)}'`)[0]?.code).toBe('limit_exceeded');
  });
});
