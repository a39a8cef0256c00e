// The hash construction, pinned by the NPL audit verifier's published sample export
// (tests/fixtures/audit/npl-audit-export.sample.json, hashes made by that verifier's own code).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  auditHashPayload,
  canonicalJson,
  chainEntry,
  computeEntryHash,
  GENESIS_HASH,
  sealEntry,
} from '../../../shared/audit/index.js';
import { verifyText } from './helpers.js';

const SAMPLE_PATH = new URL('../../fixtures/audit/npl-audit-export.sample.json', import.meta.url);
const sampleText = readFileSync(SAMPLE_PATH, 'utf8');
const sample = JSON.parse(sampleText) as AuditEntry[];

describe('hash version 2, against the reference sample', () => {
  it('builds the payload line the reference builds', () => {
    expect(auditHashPayload(sample[0]!)).toBe(
      '{"actorType":"agent","confidence":"1","hashVersion":"2","regulatoryRelevance":"[\\"DORA\\"]",' +
        '"resourceId":"act_demo_1","resourceType":"agent_action","tool":"drop_table"}',
    );
  });

  it('recomputes both published hashes', () => {
    expect(computeEntryHash(sample[0]!, null)).toBe(
      '6a992110fb36aa0ef1aa1ed79f58878899d78ae246f55c4aca3ddbe617c1e494',
    );
    expect(computeEntryHash(sample[0]!, GENESIS_HASH)).toBe(sample[0]!.hash);
    expect(computeEntryHash(sample[1]!, sample[0]!.hash)).toBe(
      '527858a678163c4658ab645181557ac456f6e11303cb11bb14c06a0a8c63a79c',
    );
  });

  it('verifies the sample export and reports its head', async () => {
    expect(await verifyText(sampleText)).toEqual({
      ok: true,
      count: 2,
      head: '527858a678163c4658ab645181557ac456f6e11303cb11bb14c06a0a8c63a79c',
      tenantId: '01DEMOPILOTTENANT000000',
    });
  });

  it('rebuilds the sample entries with chainEntry, up to the seal we add', () => {
    const first = chainEntry({ ...sample[0]!, metadata: sample[0]!.metadata! }, null);
    // Same content, plus the hashed seal in `after`: a different, equally valid hash.
    expect(first.metadata).toEqual(sample[0]!.metadata);
    expect(first.after).toBe(sealEntry({ id: 'demo_1', metadata: sample[0]!.metadata }));
    expect(first.hash).toBe(computeEntryHash(first, null));
    expect(first.hash).not.toBe(sample[0]!.hash);
    expect(computeEntryHash({ ...first, after: null }, null)).toBe(sample[0]!.hash);
  });
});

describe('payload rules', () => {
  const base = {
    tenantId: 't',
    action: 'a',
    resourceType: 'agent',
    resourceId: 'r',
    createdAt: '2026-01-01T00:00:00.000Z',
  };

  it('uses hash version 1 (no metadata) unless metadata.hashVersion is 2 or "2"', () => {
    expect(auditHashPayload({ ...base, metadata: { tool: 'x' } })).toBe(
      '{"resourceId":"r","resourceType":"agent"}',
    );
    expect(auditHashPayload({ ...base, metadata: { hashVersion: '2', tool: 'x' } })).toBe(
      '{"hashVersion":"2","resourceId":"r","resourceType":"agent","tool":"x"}',
    );
  });

  it('leaves out null and empty values and coerces confidence through Number', () => {
    expect(
      auditHashPayload({
        ...base,
        resourceId: '',
        metadata: { hashVersion: 2, tool: '', actorType: null, confidence: '0.50' },
      }),
    ).toBe('{"confidence":"0.5","hashVersion":"2","resourceType":"agent"}');
  });

  it('sorts regulatoryRelevance with localeCompare, as the reference does', () => {
    expect(
      auditHashPayload({
        ...base,
        metadata: { hashVersion: 2, regulatoryRelevance: ['MIFID2', 'B', 'a'] },
      }),
    ).toContain('"regulatoryRelevance":"[\\"a\\",\\"B\\",\\"MIFID2\\"]"');
  });

  it('leaves id and all but four metadata keys out: they are covered by the seal alone', () => {
    const metadata = { hashVersion: 2, tool: 'x', reasonCode: 'NPL_POLICY_BLOCK' };
    const edited = { ...metadata, reasonCode: 'NONE' };
    expect(computeEntryHash({ ...base, metadata: edited }, null)).toBe(
      computeEntryHash({ ...base, metadata }, null),
    );
    expect(sealEntry({ id: 'e1', metadata: edited })).not.toBe(sealEntry({ id: 'e1', metadata }));
    expect(sealEntry({ id: 'e2', metadata })).not.toBe(sealEntry({ id: 'e1', metadata }));
  });

  it('seals the canonical JSON of id and metadata', async () => {
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256')
      .update('{"id":"e1","metadata":{"a":[1,{"b":"é","c":null}],"hashVersion":2}}', 'utf8')
      .digest('hex');
    expect(sealEntry({ id: 'e1', metadata: { hashVersion: 2, a: [1, { c: null, b: 'é' }] } })).toBe(
      `seal-sha256:${digest}`,
    );
  });

  it('joins prevHash, createdAt, tenantId, action and payload with newlines', async () => {
    const { createHash } = await import('node:crypto');
    const content = [GENESIS_HASH, base.createdAt, 't', 'a', auditHashPayload(base)].join('\n');
    expect(computeEntryHash(base, null)).toBe(
      createHash('sha256').update(content, 'utf8').digest('hex'),
    );
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'é' }, 2], c: { z: true, y: false } })).toBe(
      '{"a":[{"c":"é","d":null},2],"b":1,"c":{"y":false,"z":true}}',
    );
  });

  it('is the same for a value and its JSON round trip', () => {
    const value = { x: undefined, n: 1.5e-7, s: 'line\n\u2028', k: [undefined, 1] };
    expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(canonicalJson(value));
  });

  it('keeps a "__proto__" key from parsed JSON as data', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe(
      '{"__proto__":{"x":1},"b":1}',
    );
  });
});

it('pins the hash of one entry our writer makes (regression vector)', () => {
  const entry = chainEntry(
    {
      id: 'evt_1',
      tenantId: 'ten_acme',
      action: 'inspect.denied',
      resourceType: 'agent',
      resourceId: 'agt_1',
      createdAt: '2026-03-01T09:00:00.000Z',
      metadata: { tool: 'drop_table', actorType: 'agent', reasonCode: 'NPL_POLICY_BLOCK' },
    },
    null,
  );
  expect(entry.after).toBe(
    sealEntry({
      id: 'evt_1',
      metadata: {
        actorType: 'agent',
        hashVersion: 2,
        reasonCode: 'NPL_POLICY_BLOCK',
        tool: 'drop_table',
      },
    }),
  );
  expect(entry.hash).toBe('bb5d15f254e78b9d0877e1b0f977efa20a9ac20e9f4c06908159a751dcc05b70');
});
