// The streaming reader gives the same entries, and the same errors at the same positions,
// however the input is cut into chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuditExportSyntaxError,
  formatAuditExport,
  readAuditExport,
} from '../../../shared/audit/index.js';
import { propertyRuns } from '../../support/property-runs.js';
import { buildChain, chunked, exportText } from './helpers.js';

type Outcome =
  | { entries: unknown[] }
  | { error: { message: string; index: number; position: unknown }; entries: unknown[] };

async function read(
  chunks: Iterable<Uint8Array | string>,
  maxEntryBytes?: number,
): Promise<Outcome> {
  const entries: unknown[] = [];
  try {
    const options = maxEntryBytes === undefined ? {} : { maxEntryBytes };
    for await (const entry of readAuditExport(chunks, options)) entries.push(entry);
    return { entries };
  } catch (error) {
    if (!(error instanceof AuditExportSyntaxError)) throw error;
    const { message, index, position } = error;
    return { error: { message, index, position }, entries };
  }
}

function splitsAt(text: string, at: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  return [bytes.slice(0, at), bytes.slice(at)];
}

// Multi-byte characters of every UTF-8 length, escapes, nesting, numbers of every form.
const tricky = `\ufeff[
  {"id":"e\\u00e9\\"1","m":{"a":[1,-0.5,2e10,3E-2,0,true,false,null],"é€𝄞":"x\\\\y\\n","":{}}},
  [],
  "top-level string",
  -12.5e+3,
  {"id":"e2","emoji":"😀","nested":[[[{"deep":[]}]]]}
]
`;

const malformed = [
  '',
  '\ufeff',
  '{}',
  '[',
  '[\n  {"a":1}',
  '[{"a":1},',
  '[{"a":1},]',
  '[{"a":1} {"b":2}]',
  '[{"a":1}]]',
  '[{"a" 1}]',
  '[{a:1}]',
  '[{"a":1,}]',
  '[{"a":[1,]}]',
  '[{"a":tru}]',
  '[{"a":nul}]',
  '[{"a":01}]',
  '[{"a":1.}]',
  '[{"a":-}]',
  '[{"a":1e}]',
  '[{"a":"\\x"}]',
  '[{"a":"\\u12G4"}]',
  '[{"a":"line\nbreak"}]',
  '[{"é€":"😀"}, {"b":}]',
  '[{"a":1]',
  '[{"a":"unterminated}]',
  '[{"a":1}]\n  x',
  '\ufeff\ufeff[]',
];

describe('readAuditExport', () => {
  it('reads what JSON.parse reads', async () => {
    expect(await read([tricky])).toEqual({ entries: JSON.parse(tricky.slice(1)) });
  });

  it('gives identical results for every split position and for 1-byte chunks', async () => {
    for (const text of [tricky, ...malformed]) {
      const whole = await read([text]);
      const length = new TextEncoder().encode(text).length;
      for (let at = 0; at <= length; at++) {
        expect(await read(splitsAt(text, at)), `${JSON.stringify(text)} split at ${at}`).toEqual(
          whole,
        );
      }
      expect(await read(chunked(text, [1])), JSON.stringify(text)).toEqual(whole);
    }
  });

  it('gives identical results for random chunkings of a real export', async () => {
    const text = await exportText(buildChain(30));
    const whole = await read([text]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 40 }),
        async (sizes) => {
          expect(await read(chunked(text, sizes))).toEqual(whole);
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });

  it('gives identical errors for random chunkings of a damaged export', async () => {
    const text = await exportText(buildChain(12));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: text.length - 1 }),
        fc.constantFrom('', '}', '"', ',', ':', '[', 'x', '\n', '\\'),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }),
        async (at, insert, sizes) => {
          const damaged = text.slice(0, at) + insert + text.slice(at + 1);
          expect(await read(chunked(damaged, sizes))).toEqual(await read([damaged]));
        },
      ),
      { numRuns: propertyRuns(150) },
    );
  });

  it('reports positions by line and character column, offsets in bytes', async () => {
    const outcome = await read(['[\n  {"é€😀":1},\n  {"b":}\n]']);
    expect(outcome).toMatchObject({
      entries: [{ 'é€😀': 1 }],
      error: { index: 1, position: { line: 3, column: 8, offset: 28 } },
    });
    expect(await read(['[{"é€😀":}]'])).toMatchObject({
      error: { index: 0, position: { line: 1, column: 9, offset: 14 } },
    });
  });

  it('names the entry a cut-off file ends in', async () => {
    const text = await exportText(buildChain(3));
    const outcome = await read([text.slice(0, text.lastIndexOf('"hash"'))]);
    expect(outcome).toMatchObject({
      entries: [{ id: 'evt_0' }, { id: 'evt_1' }],
      error: { index: 2 },
    });
    if (!('error' in outcome)) throw new Error('expected an error');
    expect(outcome.error.message).toMatch(/^file ends inside entry 2, which starts at line 4/);
  });

  it('accepts strings and bytes alike, and a BOM split across chunks', async () => {
    expect(await read(['\ufeff[', '{"a"', ':1}]'])).toEqual({ entries: [{ a: 1 }] });
    expect(await read([new Uint8Array([0xef]), new Uint8Array([0xbb, 0xbf, 0x5b, 0x5d])])).toEqual({
      entries: [],
    });
  });

  it('rejects invalid UTF-8 inside an entry', async () => {
    const bytes = new Uint8Array([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d]); // ["\xc3("]
    expect(await read([bytes])).toMatchObject({ error: { index: 0 } });
  });

  it('bounds the size of one entry', async () => {
    const big = `[{"a":"${'x'.repeat(5000)}"}]`;
    expect(await read(chunked(big, [100]), 1000)).toMatchObject({
      entries: [],
      error: { index: 0, message: expect.stringContaining('larger than 1000 bytes') },
    });
    expect(await read(chunked(big, [100]), 10_000)).toMatchObject({ entries: [{}] });
  });

  it('reads what formatAuditExport writes', async () => {
    const chain = buildChain(5);
    const chunks: string[] = [];
    for await (const chunk of formatAuditExport(chain)) chunks.push(chunk);
    expect(chunks[0]).toBe('[\n');
    expect(chunks.at(-1)).toBe('\n]\n');
    expect(chunks.join('').split('\n')).toHaveLength(5 + 3);
    expect(await read(chunks)).toEqual({ entries: JSON.parse(JSON.stringify(chain)) });
  });
});
