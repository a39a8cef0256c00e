// Properties over generated chains: whatever chainEntry builds verifies, through the streaming
// reader and any chunking; and any change to one field of one entry is reported at that entry.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  type AuditEntryInput,
  chainEntry,
  type JsonObject,
  type JsonValue,
  verifyAuditChain,
} from '../../../shared/audit/index.js';
import { propertyRuns } from '../../support/property-runs.js';
import { editable, exportText, verifyText } from './helpers.js';

const RESERVED = new Set(['hashVersion', 'tool', 'actorType', 'confidence', 'regulatoryRelevance']);

const metadataArb: fc.Arbitrary<JsonObject> = fc
  .record(
    {
      free: fc.dictionary(
        fc.string({ maxLength: 8 }).filter((key) => !RESERVED.has(key)),
        fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>,
        { maxKeys: 4 },
      ),
      tool: fc.string({ maxLength: 10 }),
      actorType: fc.constantFrom('agent', 'operator', 'system'),
      confidence: fc.double({ noNaN: true, noDefaultInfinity: true }),
      regulatoryRelevance: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
    },
    { requiredKeys: ['free'] },
  )
  .map(({ free, ...hashed }) => ({ ...free, ...hashed }) as JsonObject);

const inputArb = fc.record({
  action: fc.string({ minLength: 1, maxLength: 20 }),
  resourceType: fc.string({ minLength: 1, maxLength: 10 }),
  resourceId: fc.string({ maxLength: 10 }),
  step: fc.integer({ min: 0, max: 86_400_000 }),
  metadata: metadataArb,
});

const chainArb = fc
  .tuple(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.array(inputArb, { minLength: 1, maxLength: 12 }),
  )
  .map(([tenantId, inputs]) => {
    const entries: AuditEntry[] = [];
    let prev: string | null = null;
    let time = Date.parse('2026-01-01T00:00:00.000Z');
    inputs.forEach((input, i) => {
      time += input.step;
      const entryInput: AuditEntryInput = {
        id: `evt_${i}`,
        tenantId,
        action: input.action,
        resourceType: input.resourceType,
        resourceId: input.resourceId,
        createdAt: new Date(time),
        metadata: input.metadata,
      };
      const entry = chainEntry(entryInput, prev);
      entries.push(entry);
      prev = entry.hash;
    });
    return entries;
  });

// Every field of an entry, with a way to change it to a different value of the right type.
const FIELDS = [
  'id',
  'tenantId',
  'action',
  'resourceType',
  'resourceId',
  'createdAt',
  'hash',
  'prevHash',
  'after',
  'metadata',
] as const;

function mutate(
  entry: Record<string, unknown>,
  field: (typeof FIELDS)[number],
  salt: string,
): void {
  switch (field) {
    case 'createdAt':
      entry.createdAt = new Date(Date.parse(entry.createdAt as string) + 1).toISOString();
      return;
    case 'hash':
    case 'prevHash': {
      const value = (entry[field] as string | null) ?? '0'.repeat(64);
      entry[field] = (value[0] === 'a' ? 'b' : 'a') + value.slice(1);
      return;
    }
    case 'metadata': {
      const metadata = entry.metadata as Record<string, unknown>;
      const keys = Object.keys(metadata);
      const key = keys[salt.length % keys.length]!;
      metadata[key] = key === 'hashVersion' ? '2x' : { changed: metadata[key] ?? null };
      return;
    }
    default:
      entry[field] = `${entry[field] as string}${salt || '~'}`;
  }
}

describe('generated chains', () => {
  it('verify, through the streaming reader and any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        chainArb,
        fc.array(fc.integer({ min: 1, max: 512 }), { minLength: 1, maxLength: 8 }),
        async (chain, sizes) => {
          expect(await verifyAuditChain(chain)).toMatchObject({ ok: true, count: chain.length });
          const text = await exportText(chain);
          expect(await verifyText(text, {}, sizes)).toEqual({
            ok: true,
            count: chain.length,
            head: chain.at(-1)!.hash,
            tenantId: chain[0]!.tenantId,
          });
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });

  it('report any single-field change at the changed entry', async () => {
    await fc.assert(
      fc.asyncProperty(
        chainArb,
        fc.nat(),
        fc.constantFrom(...FIELDS),
        fc.string({ minLength: 1, maxLength: 3 }),
        async (chain, pick, field, salt) => {
          const entries = editable(chain);
          const at = pick % entries.length;
          mutate(entries[at]!, field, salt);
          const result = await verifyAuditChain(entries);
          expect(result.ok).toBe(false);
          if (result.ok) return;
          // Every field is covered by the hash, the link or the seal, and checked at its entry.
          expect(result.firstBroken.index).toBe(at);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});
