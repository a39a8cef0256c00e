// What verifyAuditChain reports for each way an export can be damaged: always the first broken
// entry, by index and id, with its stable code.
import { describe, expect, it } from 'vitest';
import {
  type AuditEntry,
  chainEntry,
  computeEntryHash,
  GENESIS_HASH,
  type VerifyAuditChainResult,
  verifyAuditChain,
} from '../../../shared/audit/index.js';
import {
  buildChain,
  editable,
  entryInput,
  exportText,
  rawExportText,
  TENANT,
  verifyText,
} from './helpers.js';

const chain = buildChain(8);

async function verifyEntries(
  entries: unknown[],
  options?: Parameters<typeof verifyAuditChain>[1],
): Promise<VerifyAuditChainResult> {
  return verifyText(rawExportText(entries), options);
}

function brokenAt(result: VerifyAuditChainResult) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  expect(result.issues).toEqual([result.firstBroken]);
  expect(result.count).toBe(result.firstBroken.index);
  return result.firstBroken;
}

describe('intact exports', () => {
  it('verifies a chain built by chainEntry and reports its head', async () => {
    expect(await verifyEntries(chain)).toEqual({
      ok: true,
      count: 8,
      head: chain[7]!.hash,
      tenantId: TENANT,
    });
  });

  it('verifies an empty export', async () => {
    const expected = { ok: true, count: 0, head: null, tenantId: null };
    expect(await verifyText('[]')).toEqual(expected);
    expect(await verifyText('\ufeff \n[\n]\n')).toEqual(expected);
    expect(await verifyText(await exportText([]))).toEqual(expected);
  });

  it('verifies arrays and iterables directly, without the reader', async () => {
    expect((await verifyAuditChain(chain)).ok).toBe(true);
    expect((await verifyAuditChain(chain.values())).ok).toBe(true);
  });

  it('accepts a first entry whose prevHash is 64 zeros instead of null', async () => {
    const [first, ...rest] = editable(chain);
    expect((await verifyEntries([{ ...first, prevHash: GENESIS_HASH }, ...rest])).ok).toBe(true);
  });
});

describe('malformed exports', () => {
  it('reports a syntax error with the entry and its position', async () => {
    const text = (await exportText(chain.slice(0, 3))).replace('"id":"evt_1",', '"id":"evt_1"');
    const issue = brokenAt(await verifyText(text));
    expect(issue).toMatchObject({ index: 1, id: null, code: 'AUDIT_MALFORMED_JSON' });
    expect(issue.position).toMatchObject({ line: 3, column: 14 });
    expect(issue.message).toContain("expected ',' or '}'");
  });

  it('reports a file cut off inside an entry', async () => {
    const text = await exportText(chain);
    const cut = text.slice(0, text.indexOf('"id":"evt_5"') + 40);
    const issue = brokenAt(await verifyText(cut));
    expect(issue).toMatchObject({ index: 5, id: null, code: 'AUDIT_MALFORMED_JSON' });
    expect(issue.message).toContain('file ends inside entry 5');
  });

  it('reports a file cut off between entries', async () => {
    const text = await exportText(chain);
    const cut = text.slice(0, text.indexOf(',\n{"id":"evt_5"') + 2);
    const issue = brokenAt(await verifyText(cut));
    expect(issue).toMatchObject({ index: 5, code: 'AUDIT_MALFORMED_JSON' });
    expect(issue.message).toContain('file ends after entry 4');
  });

  it('reports an empty file, a non-array and data after the array', async () => {
    for (const text of ['', '{"id":"x"}', '[]\n[]']) {
      expect(brokenAt(await verifyText(text)).code).toBe('AUDIT_MALFORMED_JSON');
    }
  });

  it('verifies the entries before a syntax error first', async () => {
    const entries = editable(chain.slice(0, 3));
    entries[0]!.action = 'forged';
    const text = `${(await exportText(entries)).slice(0, -3)},\n{oops}\n]\n`;
    expect(brokenAt(await verifyText(text))).toMatchObject({
      index: 0,
      code: 'AUDIT_HASH_MISMATCH',
    });
  });
});

describe('entry shape', () => {
  for (const field of [
    'id',
    'tenantId',
    'action',
    'resourceType',
    'resourceId',
    'createdAt',
    'hash',
    'prevHash',
  ]) {
    it(`reports a missing ${field}`, async () => {
      const entries = editable(chain);
      delete entries[3]![field];
      expect(brokenAt(await verifyEntries(entries))).toMatchObject({
        index: 3,
        id: field === 'id' ? null : 'evt_3',
        code: 'AUDIT_MISSING_FIELD',
        path: [field],
      });
    });
  }

  const wrong: [string, unknown][] = [
    ['action', 42],
    ['resourceId', null],
    ['createdAt', 'yesterday'],
    ['hash', 'ABC'],
    ['hash', chain[3]!.hash.toUpperCase()],
    ['prevHash', 7],
    ['metadata', ['not', 'an', 'object']],
    ['after', { seal: true }],
    ['tenantId', ''],
  ];
  for (const [field, value] of wrong) {
    it(`reports ${field} = ${JSON.stringify(value)} as invalid`, async () => {
      const entries = editable(chain);
      entries[3]![field] = value;
      expect(brokenAt(await verifyEntries(entries))).toMatchObject({
        index: 3,
        id: 'evt_3',
        code: 'AUDIT_INVALID_FIELD',
        path: [field],
      });
    });
  }

  it('reports an entry that is not an object', async () => {
    const entries: unknown[] = editable(chain);
    entries[2] = 'evt_2';
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 2,
      id: null,
      code: 'AUDIT_INVALID_FIELD',
      path: [],
    });
  });
});

describe('edited entries', () => {
  const edits: [string, (entry: Record<string, unknown>) => void][] = [
    ['action', (e) => (e.action = 'inspect.allowed')],
    ['resourceType', (e) => (e.resourceType = 'server')],
    ['resourceId', (e) => (e.resourceId = 'agt_other')],
    ['createdAt', (e) => (e.createdAt = '2026-03-01T09:00:04.001Z')],
    ['tenantId of a one-entry export', (e) => (e.tenantId = 'ten_other')],
    ['metadata.tool', (e) => ((e.metadata as Record<string, unknown>).tool = 'read_file')],
    ['metadata.confidence', (e) => ((e.metadata as Record<string, unknown>).confidence = 0.1)],
    ['the seal in after', (e) => (e.after = `seal-sha256:${'1'.repeat(64)}`)],
    ['hash', (e) => (e.hash = 'f'.repeat(64))],
  ];
  for (const [what, edit] of edits) {
    it(`reports an edited ${what} as AUDIT_HASH_MISMATCH`, async () => {
      const single = what.includes('one-entry');
      const entries = editable(single ? chain.slice(0, 1) : chain);
      const at = single ? 0 : 4;
      edit(entries[at]!);
      expect(brokenAt(await verifyEntries(entries))).toMatchObject({
        index: at,
        id: `evt_${at}`,
        code: 'AUDIT_HASH_MISMATCH',
      });
    });
  }

  it('reports an edited id, or metadata outside the hashed keys, as AUDIT_SEAL_MISMATCH', async () => {
    for (const edit of [
      (m: Record<string, unknown>) => (m.reasonCode = 'NONE'),
      (m: Record<string, unknown>) => delete m.ruleId,
      (m: Record<string, unknown>) => (m.extra = true),
    ]) {
      const entries = editable(chain);
      edit(entries[4]!.metadata as Record<string, unknown>);
      expect(brokenAt(await verifyEntries(entries))).toMatchObject({
        index: 4,
        id: 'evt_4',
        code: 'AUDIT_SEAL_MISMATCH',
      });
    }
    const entries = editable(chain);
    entries[4]!.id = 'evt_other';
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 4,
      id: 'evt_other',
      code: 'AUDIT_SEAL_MISMATCH',
    });
  });

  it('names the successor when an entry was rewritten and re-hashed', async () => {
    const entries = editable(chain);
    entries[4] = { ...chainEntry({ ...entryInput(4), action: 'forged' }, chain[3]!.hash) };
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 5,
      id: 'evt_5',
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'deleted',
    });
  });
});

describe('deleted, reordered and duplicated entries', () => {
  it('reports a deleted entry in the middle at its successor', async () => {
    const entries = chain.filter((_, i) => i !== 3);
    const issue = brokenAt(await verifyEntries(entries));
    expect(issue).toMatchObject({
      index: 3,
      id: 'evt_4',
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'deleted',
      path: ['prevHash'],
    });
    expect(issue.message).toContain('between entries 2 and 3 was deleted');
  });

  it('reports a deleted first entry', async () => {
    const issue = brokenAt(await verifyEntries(chain.slice(1)));
    expect(issue).toMatchObject({
      index: 0,
      id: 'evt_1',
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'deleted',
    });
    expect(issue.message).toContain('does not start at the beginning of the chain');
  });

  it('accepts a slice with partial, or one continuing from the expected hash', async () => {
    const slice = chain.slice(3);
    expect(await verifyEntries(slice, { partial: true })).toMatchObject({ ok: true, count: 5 });
    expect(await verifyEntries(slice, { expectedPrevHash: chain[2]!.hash })).toMatchObject({
      ok: true,
      head: chain[7]!.hash,
    });
    expect(
      brokenAt(await verifyEntries(slice, { expectedPrevHash: chain[1]!.hash })),
    ).toMatchObject({ index: 0, id: 'evt_3', code: 'AUDIT_CHAIN_BROKEN', cause: 'deleted' });
  });

  it('reports swapped entries as reordered, naming where the predecessor is', async () => {
    const entries = [...chain];
    [entries[3], entries[4]] = [entries[4]!, entries[3]!];
    const issue = brokenAt(await verifyEntries(entries));
    expect(issue).toMatchObject({
      index: 3,
      id: 'evt_4',
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'reordered',
      relatedIndex: 4,
    });
  });

  it('reports an entry moved to the front as reordered', async () => {
    const entries = [chain[5]!, ...chain.filter((_, i) => i !== 5)];
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 0,
      id: 'evt_5',
      cause: 'reordered',
      relatedIndex: 5,
    });
  });

  it('reports a duplicated entry', async () => {
    const entries = [...chain.slice(0, 4), chain[2]!, ...chain.slice(4)];
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 4,
      id: 'evt_2',
      code: 'AUDIT_CHAIN_BROKEN',
      cause: 'duplicated',
      relatedIndex: 1,
    });
  });

  it('reports a second chain appended to the first', async () => {
    const entries = [
      ...chain.slice(0, 3),
      ...buildChain(2).map((e) => ({ ...e, id: `b_${e.id}` })),
    ];
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 3,
      id: 'b_evt_0',
      cause: 'restarted',
    });
  });

  it('reports a truncated tail when the expected head is missing', async () => {
    const head = chain[7]!.hash;
    expect((await verifyEntries(chain, { expectedHead: head })).ok).toBe(true);
    expect((await verifyEntries(chain, { expectedHead: chain[5]!.hash })).ok).toBe(true);
    expect(brokenAt(await verifyEntries(chain.slice(0, 6), { expectedHead: head }))).toMatchObject({
      index: 6,
      id: null,
      code: 'AUDIT_HEAD_MISSING',
    });
  });
});

describe('tenants and time', () => {
  it('reports entries of a second tenant', async () => {
    const other = buildChain(2, 'ten_other');
    expect(brokenAt(await verifyEntries([...chain.slice(0, 2), ...other]))).toMatchObject({
      index: 2,
      id: 'evt_0',
      code: 'AUDIT_TENANT_MIXED',
      path: ['tenantId'],
    });
  });

  it('reports a createdAt earlier than its predecessor', async () => {
    const entries: AuditEntry[] = [];
    let prev: string | null = null;
    for (const seconds of [0, 5, 3]) {
      const entry = chainEntry(
        entryInput(entries.length, { createdAt: `2026-03-01T09:00:0${seconds}.000Z` }),
        prev,
      );
      entries.push(entry);
      prev = entry.hash;
    }
    expect(brokenAt(await verifyEntries(entries))).toMatchObject({
      index: 2,
      id: 'evt_2',
      code: 'AUDIT_TIMESTAMP_ORDER',
    });
  });

  it('accepts equal timestamps', async () => {
    const a = chainEntry(entryInput(0, { createdAt: '2026-03-01T09:00:00.000Z' }), null);
    const b = chainEntry(entryInput(1, { createdAt: '2026-03-01T09:00:00.000Z' }), a.hash);
    expect((await verifyEntries([a, b])).ok).toBe(true);
  });
});

it('hashes an entry with the reference fields it carries (userId, agentId, …)', async () => {
  const fields = {
    id: 'x1',
    tenantId: TENANT,
    action: 'execution.completed',
    resourceType: 'execution',
    resourceId: 'exec1',
    after: '{"ok":true}',
    agentId: 'agt_1',
    createdAt: '2024-01-01T00:00:00.000Z',
    metadata: null,
  };
  const entry = { ...fields, prevHash: null, hash: computeEntryHash(fields, null) };
  expect((await verifyEntries([entry])).ok).toBe(true);
  expect(brokenAt(await verifyEntries([{ ...entry, agentId: 'agt_2' }])).code).toBe(
    'AUDIT_HASH_MISMATCH',
  );
});
