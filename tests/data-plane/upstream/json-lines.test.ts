// The JSON-lines reader of upstream answers (data-plane/upstream/json-lines.ts): one message per
// line as it arrives, however the bytes are split; a pretty-printed body read whole; what is not
// JSON refused at the end. Pure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonLinesReader } from '../../../data-plane/upstream/json-lines.js';
import { splitAt } from '../../support/chunks.js';
import { propertyRuns } from '../../support/property-runs.js';

function read(chunks: readonly Buffer[], stopAfter = Number.POSITIVE_INFINITY): unknown[] {
  const values: unknown[] = [];
  const reader = new JsonLinesReader((value) => {
    values.push(value);
    return values.length >= stopAfter;
  });
  for (const chunk of chunks) reader.push(chunk);
  reader.end();
  return values;
}

describe('JSON lines', () => {
  it('hands on each line as it completes, before the body ends', () => {
    const values: unknown[] = [];
    const reader = new JsonLinesReader((value) => {
      values.push(value);
      return false;
    });
    reader.push(Buffer.from('{"a":1}\n{"b":'));
    expect(values).toEqual([{ a: 1 }]);
    reader.push(Buffer.from('2}\n'));
    expect(values).toEqual([{ a: 1 }, { b: 2 }]);
    reader.end();
  });

  it('reads one object without a newline, and a pretty-printed one whole', () => {
    expect(read([Buffer.from('{"a":1}')])).toEqual([{ a: 1 }]);
    const pretty = JSON.stringify({ a: { b: [1, 2] }, c: 'x' }, null, 2);
    expect(read([Buffer.from(pretty)])).toEqual([{ a: { b: [1, 2] }, c: 'x' }]);
  });

  it('stops when told to, and refuses a tail that is not JSON', () => {
    expect(read([Buffer.from('{"a":1}\n{"b":2}\nnot json')], 1)).toEqual([{ a: 1 }]);
    expect(() => read([Buffer.from('{"a":1}\n{"b":')])).toThrow(SyntaxError);
  });

  it('gives the same messages however the bytes are split (UTF-8 split inside a character too)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' })), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (messages, cuts) => {
          const bytes = Buffer.from(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
          expect(read(splitAt(bytes, cuts))).toEqual(messages);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });
});
