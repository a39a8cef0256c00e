import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArgumentWalker,
  type CallDetector,
  compileDestructiveDetector,
  compileExfiltrationDetector,
  DEFAULT_DESTRUCTIVE_TOOL_PATTERNS,
  DEFAULT_INSPECTION_LIMITS,
  DESTRUCTIVE_SIGNAL_KINDS,
  type DetectorSignal,
  EXFILTRATION_SIGNAL_KINDS,
  resolveInspectionLimits,
} from '../../../data-plane/inspection/index.js';
import { propertyRuns } from '../../support/property-runs.js';

const destructive = compileDestructiveDetector({ toolPatterns: DEFAULT_DESTRUCTIVE_TOOL_PATTERNS });
const exfiltration = compileExfiltrationDetector({
  detectSecrets: true,
  bulkExportLimit: 1000,
  checkDestinations: true,
  allowedDomains: ['allowed.com'],
});
const DETECTORS: [string, CallDetector, readonly string[]][] = [
  ['destructive', destructive, DESTRUCTIVE_SIGNAL_KINDS],
  ['exfiltration', exfiltration, EXFILTRATION_SIGNAL_KINDS],
];

function call(args: unknown, toolName: string | undefined = 'tool') {
  return { method: 'tools/call', toolName, args };
}

function wellFormed(signal: DetectorSignal | null, kinds: readonly string[]): boolean {
  if (signal === null) return true;
  return (
    kinds.includes(signal.kind) &&
    typeof signal.detail === 'string' &&
    signal.detail.length > 0 &&
    (signal.path === undefined || signal.path.startsWith('arguments'))
  );
}

/** Strings biased towards the detectors' vocabulary, so the properties reach deep code paths. */
const hostileString = fc.oneof(
  fc.string(),
  fc
    .array(
      fc.constantFrom(
        'DROP ',
        'TABLE ',
        'DELETE ',
        'FROM ',
        'WHERE ',
        'UPDATE ',
        'SET ',
        'a = 1',
        "'",
        '"',
        '$$',
        '$x$',
        '--',
        '/*',
        '*/',
        '(',
        ')',
        ';',
        '\\',
        'rm ',
        '-rf ',
        '/ ',
        '$(',
        '`',
        '|',
        '&&',
        '> /dev/sda',
        'https://',
        'evil.io',
        '@',
        'allowed.com',
        'AKIA',
        'eyJ',
        '.',
        '-----BEGIN ',
        'PRIVATE KEY-----',
        'LIMIT 5000',
        ':(){ :|:& };:',
        'sh -c ',
        'x',
      ),
      { maxLength: 30 },
    )
    .map((parts) => parts.join('')),
);
const hostileJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(
      fc.constantFrom('query', 'command', 'method', 'limit', 'url', 'args', 'argv', 'x'),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

describe.each(DETECTORS)('%s detector on arbitrary input', (_name, detector, kinds) => {
  it('never throws and returns null or a well-formed signal (JSON values)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.string()), (args, tool) => {
        const signal = detector(call(args, tool ?? undefined));
        expect(wellFormed(signal, kinds)).toBe(true);
        expect(detector(call(args, tool ?? undefined))).toEqual(signal);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('never throws on detector-shaped JSON and is deterministic', () => {
    fc.assert(
      fc.property(hostileJson, (args) => {
        const signal = detector(call(args));
        expect(wellFormed(signal, kinds)).toBe(true);
        expect(detector(call(args))).toEqual(signal);
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('never throws on anything (non-JSON values, odd prototypes)', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withNullPrototype: true,
          withSparseArray: true,
          withBoxedValues: true,
        }),
        (args) => {
          expect(wellFormed(detector(call(args)), kinds)).toBe(true);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('fails closed on a throwing getter or proxy', () => {
    const getter = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom');
        },
      },
    );
    for (const args of [getter, { nested: [proxy] }]) {
      const signal = detector(call(args));
      expect(signal?.kind).toBe('inspection-limit');
    }
  });

  it('survives a cyclic object (skips the back edge)', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    a.list = [a, { back: a }];
    expect(detector(call(a))).toBeNull();
  });
});

/**
 * Runs `fn`, asserting it finishes within `ms`: linear work on these inputs takes tens of
 * milliseconds, super-linear work minutes or more, so a bound this generous still tells them
 * apart on a loaded machine without failing on a slow one.
 */
function timed<T>(fn: () => T, ms = 5_000): T {
  const start = performance.now();
  const result = fn();
  expect(performance.now() - start).toBeLessThan(ms);
  return result;
}

function deepNesting(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

describe.each(DETECTORS)(
  '%s detector on hostile input: bounded time, fails closed',
  (_n, detector) => {
    it('a 10 MB string → inspection-limit (maxStringBytes)', () => {
      const signal = timed(() => detector(call({ blob: 'a'.repeat(10 * 1024 * 1024) })));
      expect(signal).toEqual({
        kind: 'inspection-limit',
        detail: 'maxStringBytes',
        path: 'arguments.blob',
      });
    });

    it('a 100k-element array → inspection-limit (maxNodes)', () => {
      const signal = timed(() =>
        detector(call({ rows: Array.from({ length: 100_000 }, (_, i) => i) })),
      );
      expect(signal?.kind).toBe('inspection-limit');
      expect(signal?.detail).toBe('maxNodes');
    });

    it('100k short strings → inspection-limit (maxStrings)', () => {
      const signal = timed(() => detector(call(Array.from({ length: 100_000 }, () => 'ok'))));
      expect(signal?.detail).toBe('maxStrings');
    });

    it('many medium strings → inspection-limit (maxTotalBytes)', () => {
      const chunk = 'lorem ipsum '.repeat(20_000);
      const signal = timed(() => detector(call(Array.from({ length: 8 }, () => chunk))));
      expect(signal?.detail).toBe('maxTotalBytes');
    });

    it('10k-deep nesting → inspection-limit (maxDepth)', () => {
      const signal = timed(() => detector(call(deepNesting(10_000, 'x'))));
      expect(signal?.kind).toBe('inspection-limit');
      expect(signal?.detail).toBe('maxDepth');
    });

    it('pathological strings within the limits finish in bounded time', () => {
      const size = DEFAULT_INSPECTION_LIMITS.maxStringBytes - 16;
      const inputs = [
        '('.repeat(size),
        `SELECT ${'('.repeat(100_000)}`,
        `DELETE FROM t RETURNING ${'(DELETE FROM t RETURNING '.repeat(9_000)}`,
        `UPDATE t SET a = 1 ${'OR '.repeat(60_000)}`,
        `SELECT '${'x'.repeat(size - 10)}`,
        `SELECT "${'x'.repeat(size - 10)}`,
        `/* ${'/*'.repeat(100_000)}`,
        `$a$${'$'.repeat(size - 3)}`,
        `rm ${'"'.repeat(size - 3)}`,
        `sh -c ${'$('.repeat(100_000)}`,
        `rm -x ${'`'.repeat(size - 6)}`,
        `${'a()'.repeat(80_000)}{`,
        `${':(){ '.repeat(40_000)}`,
        `https://${'a'.repeat(size - 8)}`,
        `x@${'a.'.repeat(100_000)}io`,
        '@'.repeat(size),
        'a@b.io '.repeat(30_000),
        'https://evil.io '.repeat(14_000),
        `eyJ${'A'.repeat(size - 10)}.a.b`,
        '-----BEGIN '.repeat(20_000),
        'AKIA'.repeat(60_000),
        `LIMIT ${'9'.repeat(size - 6)}`,
      ];
      for (const input of inputs) {
        const signal = timed(() => detector(call({ command: input })));
        expect(signal === null || typeof signal.kind === 'string').toBe(true);
      }
    });
  },
);

describe('inspection limits', () => {
  it('are options with validated defaults', () => {
    expect(resolveInspectionLimits()).toBe(DEFAULT_INSPECTION_LIMITS);
    expect(resolveInspectionLimits({ maxDepth: 3 }).maxDepth).toBe(3);
    expect(() => resolveInspectionLimits({ maxDepth: 0 })).toThrow(RangeError);
    expect(() => resolveInspectionLimits({ maxStrings: 1.5 })).toThrow(RangeError);
  });

  it('tighter limits make a detector fail closed sooner', () => {
    const tight = compileDestructiveDetector({
      toolPatterns: [],
      limits: { maxDepth: 2, maxStrings: 3 },
    });
    expect(tight(call({ a: { b: 'x' } }))).toBeNull();
    expect(tight(call({ a: { b: { c: 'x' } } }))).toEqual({
      kind: 'inspection-limit',
      detail: 'maxDepth',
      path: 'arguments.a.b',
    });
    expect(tight(call(['a', 'b', 'c', 'd']))?.detail).toBe('maxStrings');
  });

  it('too many URLs to check → inspection-limit (maxCandidates)', () => {
    const few = compileExfiltrationDetector({
      detectSecrets: false,
      bulkExportLimit: null,
      checkDestinations: true,
      allowedDomains: ['allowed.com'],
      limits: { maxCandidates: 5 },
    });
    expect(few(call({ text: 'https://allowed.com/ '.repeat(5) }))).toBeNull();
    expect(few(call({ text: 'https://allowed.com/ '.repeat(6) }))?.detail).toBe('maxCandidates');
  });

  it('the walker visits leaves in document order with JSON paths', () => {
    const seen: string[] = [];
    const walker = new ArgumentWalker(DEFAULT_INSPECTION_LIMITS);
    walker.walk(
      { b: ['x', { 'c d': 'y' }], a: 'z', n: 1 },
      {
        visitString(value, w) {
          seen.push(`${w.path()}=${value}`);
          return null;
        },
        visitNumber(value, w) {
          seen.push(`${w.path()}=${value}`);
          return null;
        },
        visitBoolean() {
          return null;
        },
      },
    );
    expect(seen).toEqual([
      'arguments.b[0]=x',
      'arguments.b[1]["c d"]=y',
      'arguments.a=z',
      'arguments.n=1',
    ]);
  });
});
