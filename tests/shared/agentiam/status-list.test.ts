// Status lists are the W3C Bitstring Status List encoding, read back by Digital Bazaar's own
// decoder (the one @digitalbazaar/vc-bitstring-status-list checks credentials with): what we
// encode is what an independent verifier reads, index 0 being the most significant bit.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeStatusList,
  encodeStatusList,
  isBitSet,
  STATUS_LIST_SIZE,
  setBit,
} from '../../../shared/agentiam/status-list.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { propertyRuns } from '../../support/property-runs.js';

interface DigitalBazaarList {
  length: number;
  getStatus(index: number): boolean;
  setStatus(index: number, status: boolean): void;
  encode(): Promise<string>;
}
interface DigitalBazaarStatusList {
  createList(options: { length: number }): Promise<DigitalBazaarList>;
  decodeList(options: { encodedList: string }): Promise<DigitalBazaarList>;
}

// The package publishes no types; a computed specifier keeps it typed by the interface above.
const BITSTRING_STATUS_LIST = '@digitalbazaar/vc-bitstring-status-list';
const digitalBazaar = (await import(BITSTRING_STATUS_LIST)) as DigitalBazaarStatusList;

const LIST_BYTES = STATUS_LIST_SIZE / 8;

function listWith(indexes: Iterable<number>): Uint8Array {
  const bits = new Uint8Array(LIST_BYTES);
  for (const index of indexes) setBit(bits, index);
  return bits;
}

function malformedProblem(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('CREDENTIAL_MALFORMED');
    return (error as GatewayError).message;
  }
  throw new Error('expected CREDENTIAL_MALFORMED');
}

const indexSets = fc.uniqueArray(fc.integer({ min: 0, max: STATUS_LIST_SIZE - 1 }), {
  maxLength: 64,
});

describe('the bitstring', () => {
  it('has 131072 entries, index 0 the most significant bit of byte 0', () => {
    expect(STATUS_LIST_SIZE).toBe(131_072);
    const bits = listWith([0, 9, STATUS_LIST_SIZE - 1]);
    expect(bits[0]).toBe(0x80);
    expect(bits[1]).toBe(0x40);
    expect(bits[LIST_BYTES - 1]).toBe(0x01);
    expect(isBitSet(bits, 0)).toBe(true);
    expect(isBitSet(bits, 1)).toBe(false);
    expect(isBitSet(bits, 9)).toBe(true);
    expect(isBitSet(bits, STATUS_LIST_SIZE - 1)).toBe(true);
  });

  it.each([-1, STATUS_LIST_SIZE, 1.5, Number.NaN])('refuses index %s as out of range', (index) => {
    const bits = new Uint8Array(LIST_BYTES);
    expect(() => isBitSet(bits, index)).toThrow(RangeError);
    expect(() => setBit(bits, index)).toThrow(RangeError);
  });
});

describe('encodedList', () => {
  it("is 'u' and base64url without padding of the GZIP of the bitstring", () => {
    const encoded = encodeStatusList(listWith([3]));
    expect(encoded).toMatch(/^u[A-Za-z0-9_-]+$/);
    expect(isBitSet(decodeStatusList(encoded), 3)).toBe(true);
  });

  it('round-trips any set of entries', () => {
    fc.assert(
      fc.property(indexSets, (indexes) => {
        const decoded = decodeStatusList(encodeStatusList(listWith(indexes)));
        expect(Buffer.from(decoded).equals(listWith(indexes))).toBe(true);
        for (const index of indexes) expect(isBitSet(decoded, index)).toBe(true);
      }),
      { numRuns: propertyRuns(50) },
    );
  });

  it("is what Digital Bazaar's decoder reads, entry for entry", async () => {
    await fc.assert(
      fc.asyncProperty(
        indexSets,
        fc.integer({ min: 0, max: STATUS_LIST_SIZE - 1 }),
        async (indexes, probe) => {
          const list = await digitalBazaar.decodeList({
            encodedList: encodeStatusList(listWith(indexes)),
          });
          expect(list.length).toBe(STATUS_LIST_SIZE);
          for (const index of indexes) expect(list.getStatus(index)).toBe(true);
          expect(list.getStatus(probe)).toBe(indexes.includes(probe));
        },
      ),
      { numRuns: propertyRuns(30) },
    );
  });

  it("reads what Digital Bazaar's encoder writes", async () => {
    const list = await digitalBazaar.createList({ length: STATUS_LIST_SIZE });
    for (const index of [0, 7, 8, 65_536, STATUS_LIST_SIZE - 1]) list.setStatus(index, true);
    const bits = decodeStatusList(await list.encode());
    expect(bits).toEqual(listWith([0, 7, 8, 65_536, STATUS_LIST_SIZE - 1]));
  });

  it('encodes only lists of exactly 131072 entries', () => {
    expect(() => encodeStatusList(new Uint8Array(LIST_BYTES - 1))).toThrow(RangeError);
    expect(() => encodeStatusList(new Uint8Array(LIST_BYTES + 1))).toThrow(RangeError);
  });
});

describe('decoding refuses', () => {
  const valid = encodeStatusList(new Uint8Array(LIST_BYTES));
  const encode = (bytes: Uint8Array) => `u${gzipSync(bytes).toString('base64url')}`;

  it.each([
    ['an empty string', '', 'is not multibase base64url'],
    ['another multibase prefix', `z${valid.slice(1)}`, 'is not multibase base64url'],
    ['base64 padding', `${valid}=`, 'is not multibase base64url'],
    ['characters outside base64url', `${valid.slice(0, 10)}+/${valid.slice(12)}`, 'not multibase'],
    ['data that is not GZIP', `u${Buffer.from('not gzip').toString('base64url')}`, 'not GZIP'],
    [
      'GZIP with trailing bytes',
      `u${Buffer.concat([gzipSync(new Uint8Array(LIST_BYTES)), Buffer.from('trailer')]).toString('base64url')}`,
      'not GZIP',
    ],
    ['a truncated stream', valid.slice(0, -8), 'not GZIP'],
    ['a list one byte short', encode(new Uint8Array(LIST_BYTES - 1)), 'fewer than 131072'],
    ['an empty list', encode(new Uint8Array(0)), 'decompresses to 0 bits'],
    ['a list one byte long', encode(new Uint8Array(LIST_BYTES + 1)), 'more than 131072 bits'],
    ['absurdly long text', `u${'A'.repeat(4 * LIST_BYTES)}`, 'characters, more than'],
  ])('%s', (_name, encoded, problem) => {
    const message = malformedProblem(() => decodeStatusList(encoded));
    expect(message).toContain('hop status-list: credential is malformed: encodedList');
    expect(message).toContain(problem);
  });

  it('a GZIP bomb, without inflating it', () => {
    const bomb = encode(new Uint8Array(32 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(4 * LIST_BYTES);
    expect(malformedProblem(() => decodeStatusList(bomb))).toContain('more than 131072 bits');
  });

  it('naming the hop it is given', () => {
    expect(malformedProblem(() => decodeStatusList('x', 2))).toMatch(/^hop 2: /);
  });
});
