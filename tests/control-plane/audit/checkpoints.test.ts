// The anchored audit trail over real HTTP on both databases: signed checkpoints (the C2SP note,
// verified with the public verifier key), proofs from stored nodes that verify against them,
// the cut rules (a new tenant, entries, demand, rotation), and every refusal with its status and
// reasonCode.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rotateAuditKey } from '../../../control-plane/audit/signing-key.js';
import { auditLeafHash } from '../../../shared/audit/index.js';
import { encodeEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import {
  MerkleFrontier,
  noteSignedBy,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  verifyConsistency,
  verifyInclusion,
} from '../../../shared/tlog/index.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { goTlog, goTlogMissing } from '../../support/go-tlog.js';
import { until } from '../../support/until.js';

const ENTRIES = 5;

describeEachDatabase('audit checkpoints and proofs', (kind) => {
  let gw: TestGateway;
  let auditor: string;

  const get = (path: string, key: string | null = auditor, method = 'GET') =>
    fetch(`${gw.url}${path}`, {
      method,
      headers: key === null ? {} : { authorization: `Bearer ${key}` },
    });
  const verifierKeys = async () =>
    (await (await get('/api/v1/audit/checkpoint/key', null)).text()).trim().split('\n');
  const openCheckpoint = async (note: string, keyText?: string) => {
    const key = parseVerifierKey(keyText ?? ((await verifierKeys())[0] as string));
    const parsed = parseNote(note);
    if (typeof key === 'string' || typeof parsed === 'string') throw new Error(`${key} ${parsed}`);
    expect(noteSignedBy(parsed, key)).toBe(true);
    const checkpoint = parseCheckpoint(parsed.text);
    if (typeof checkpoint === 'string') throw new Error(checkpoint);
    return checkpoint;
  };
  const exportHashes = async () =>
    ((await (await get('/api/v1/audit/export')).json()) as { id: string; hash: string }[]).map(
      (entry) => ({ id: entry.id, hash: entry.hash }),
    );
  const appendEntries = async (count: number, tenantId = gw.tenant.id) => {
    for (let i = 0; i < count; i++) {
      await gw.runtime.audit.append({
        tenantId,
        action: 'test.event',
        resourceType: 'test',
        resourceId: `r${i}`,
      });
    }
  };
  const cut = async () => {
    const response = await get('/api/v1/audit/checkpoint', auditor, 'POST');
    expect(response.status).toBe(200);
    return openCheckpoint(await response.text());
  };

  beforeAll(async () => {
    gw = await startTestGateway(kind, {
      auditCheckpoints: { entries: ENTRIES, seconds: 3600 },
    });
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
  });
  afterAll(() => gw?.close());

  it('gives a tenant a signed checkpoint from the start, verifiable with the public key', async () => {
    const response = await get('/api/v1/audit/checkpoint');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const checkpoint = await openCheckpoint(await response.text());
    const host = new URL(gw.url).host;
    expect(checkpoint.origin).toBe(`${host}/audit/${gw.tenant.id}`);
    expect(response.headers.get('x-audit-tree-size')).toBe(String(checkpoint.size));
    const keys = await verifierKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${host.replace('.', '\\.')}/audit\\+[0-9a-f]{8}\\+`));
  });

  it("cuts on demand over every committed entry: the root is the export's", async () => {
    await appendEntries(3);
    const checkpoint = await cut();
    const entries = await exportHashes();
    expect(checkpoint.size).toBe(entries.length);
    const frontier = new MerkleFrontier();
    for (const entry of entries) frontier.append(auditLeafHash(entry.hash));
    expect(Buffer.from(checkpoint.rootHash)).toEqual(Buffer.from(frontier.root()));
    // Nothing appended since: the same checkpoint.
    expect(await cut()).toEqual(checkpoint);
  });

  it('cuts by itself once AGENT_GATEWAY_AUDIT_CHECKPOINT_ENTRIES entries were appended', async () => {
    const before = await cut();
    await appendEntries(ENTRIES);
    const after = await until(
      async () => openCheckpoint(await (await get('/api/v1/audit/checkpoint')).text()),
      (checkpoint) => checkpoint.size >= before.size + ENTRIES,
      'a checkpoint cut by the entries rule',
    );
    expect(after.size).toBe(before.size + ENTRIES);
  });

  it('proves every entry included and every size consistent, against signed roots', async () => {
    const first = await cut();
    await appendEntries(7);
    const second = await cut();
    const entries = await exportHashes();
    for (const [index, entry] of entries.entries()) {
      const response = await get(
        `/api/v1/audit/proof/inclusion?entry_id=${entry.id}&tree_size=${second.size}`,
      );
      expect(response.status).toBe(200);
      const proof = (await response.json()) as {
        treeSize: number;
        leafIndex: number;
        hashes: string[];
      };
      expect(proof.treeSize).toBe(second.size);
      expect(proof.leafIndex).toBe(index);
      const hashes = proof.hashes.map((hash) => Buffer.from(hash, 'base64'));
      expect(
        verifyInclusion(auditLeafHash(entry.hash), index, second.size, hashes, second.rootHash),
      ).toBe(true);
    }
    const response = await get(
      `/api/v1/audit/proof/consistency?first=${first.size}&second=${second.size}`,
    );
    expect(response.status).toBe(200);
    const proof = (await response.json()) as { treeSize: number; hashes: string[] };
    expect(proof.treeSize).toBe(second.size);
    const hashes = proof.hashes.map((hash) => Buffer.from(hash, 'base64'));
    expect(
      verifyConsistency(first.size, second.size, first.rootHash, second.rootHash, hashes),
    ).toBe(true);
  });

  it.skipIf(goTlogMissing() !== undefined)(
    "is accepted by Go's x/mod/sumdb: note.Open with the published key, tlog.CheckRecord and CheckTree",
    async () => {
      const first = await cut();
      await appendEntries(9);
      const response = await get('/api/v1/audit/checkpoint', auditor, 'POST');
      const note = await response.text();
      const second = await openCheckpoint(note);
      const entries = await exportHashes();
      const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
      const inclusions = [];
      for (const index of [0, Math.floor(second.size / 2), second.size - 1]) {
        const entry = entries[index] as { id: string; hash: string };
        const proof = (await (
          await get(`/api/v1/audit/proof/inclusion?entry_id=${entry.id}&tree_size=${second.size}`)
        ).json()) as { hashes: string[] };
        inclusions.push({
          index,
          treeSize: second.size,
          leaf: b64(auditLeafHash(entry.hash)),
          root: b64(second.rootHash),
          hashes: proof.hashes,
        });
      }
      const consistency = (await (
        await get(`/api/v1/audit/proof/consistency?first=${first.size}&second=${second.size}`)
      ).json()) as { hashes: string[] };
      const go = await goTlog<{
        notes: { ok: boolean }[];
        inclusions: boolean[];
        consistencies: boolean[];
      }>({
        mode: 'verify',
        verifierKey: (await verifierKeys())[0],
        notes: [note],
        inclusions,
        consistencies: [
          {
            first: first.size,
            second: second.size,
            firstRoot: b64(first.rootHash),
            secondRoot: b64(second.rootHash),
            hashes: consistency.hashes,
          },
        ],
      });
      expect(go).toEqual({
        notes: [{ ok: true, text: expect.any(String) }],
        inclusions: [true, true, true],
        consistencies: [true],
      });
    },
  );

  it('refuses each bad request with its status and reasonCode, and shows no other tenant', async () => {
    const latest = await cut();
    const [entry] = await exportHashes();
    const other = await gw.addTenant();
    await appendEntries(1, other.id);
    const otherAuditor = await gw.addApiKey(other.id, ['audit:read']);
    const theirs = (await (await get('/api/v1/audit/export', otherAuditor)).json()) as {
      id: string;
    }[];
    const foreign = theirs[0]?.id as string;
    const inclusion = (query: string) => `/api/v1/audit/proof/inclusion?${query}`;
    const consistency = (query: string) => `/api/v1/audit/proof/consistency?${query}`;
    const cases: [string, string | null, string, number, string][] = [
      ['GET', null, '/api/v1/audit/checkpoint', 401, 'AUTH_INVALID_API_KEY'],
      ['POST', null, '/api/v1/audit/checkpoint', 401, 'AUTH_INVALID_API_KEY'],
      ['GET', gw.tenant.key, '/api/v1/audit/checkpoint', 403, 'AUTH_INSUFFICIENT_SCOPE'],
      ['POST', gw.tenant.key, '/api/v1/audit/checkpoint', 403, 'AUTH_INSUFFICIENT_SCOPE'],
      [
        'GET',
        gw.tenant.key,
        inclusion(`entry_id=${entry?.id}&tree_size=1`),
        403,
        'AUTH_INSUFFICIENT_SCOPE',
      ],
      ['GET', null, consistency('first=1&second=1'), 401, 'AUTH_INVALID_API_KEY'],
      ['GET', auditor, inclusion(`entry_id=${entry?.id}&tree_size=0`), 400, 'REQUEST_INVALID'],
      ['GET', auditor, inclusion(`entry_id=${entry?.id}&tree_size=x`), 400, 'REQUEST_INVALID'],
      ['GET', auditor, inclusion(`entry_id=${entry?.id}`), 400, 'REQUEST_INVALID'],
      [
        'GET',
        auditor,
        inclusion(`entry_id=${entry?.id}&tree_size=${latest.size + 1}`),
        400,
        'AUDIT_PROOF_SIZE_INVALID',
      ],
      ['GET', auditor, inclusion(`entry_id=${foreign}&tree_size=1`), 404, 'AUDIT_ENTRY_NOT_FOUND'],
      ['GET', auditor, inclusion(`entry_id=nope&tree_size=1`), 404, 'AUDIT_ENTRY_NOT_FOUND'],
      ['GET', auditor, consistency('first=0&second=1'), 400, 'REQUEST_INVALID'],
      ['GET', auditor, consistency('first=2&second=1'), 400, 'AUDIT_PROOF_SIZE_INVALID'],
      [
        'GET',
        auditor,
        consistency(`first=1&second=${latest.size + 1}`),
        400,
        'AUDIT_PROOF_SIZE_INVALID',
      ],
      ['GET', auditor, consistency('first=1'), 400, 'REQUEST_INVALID'],
    ];
    for (const [method, key, path, status, reasonCode] of cases) {
      const response = await get(path, key, method);
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(((await response.json()) as { reasonCode: string }).reasonCode, path).toBe(reasonCode);
    }
    // An entry whose seq is beyond the tree size asked for.
    const entries = await exportHashes();
    const last = entries.at(-1) as { id: string };
    const beyond = await get(inclusion(`entry_id=${last.id}&tree_size=1`));
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as { message: string }).message).toContain(
      `ask for a tree size of at least ${entries.length}`,
    );
    // The other tenant's checkpoint is its own.
    const theirCheckpoint = await openCheckpoint(
      await (await get('/api/v1/audit/checkpoint', otherAuditor, 'POST')).text(),
    );
    expect(theirCheckpoint.origin).toMatch(new RegExp(`/audit/${other.id}$`));
  });

  it("answers the same through GraphQL, inside the caller's tenant and scope", async () => {
    const graphql = async (query: string, key = auditor) => {
      const response = await fetch(`${gw.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as {
        data?: Record<string, Record<string, unknown> | null>;
        errors?: { extensions?: { code?: string } }[];
      };
    };
    const cut = await graphql(
      'mutation { cutAuditCheckpoint { treeSize rootHash note origin verifierKey createdAt } }',
    );
    const checkpoint = cut.data?.cutAuditCheckpoint as {
      treeSize: number;
      note: string;
      verifierKey: string;
      origin: string;
    };
    expect(checkpoint.origin).toMatch(new RegExp(`/audit/${gw.tenant.id}$`));
    expect(checkpoint.verifierKey).toBe((await verifierKeys())[0]);
    const opened = await openCheckpoint(checkpoint.note);
    expect(opened.size).toBe(checkpoint.treeSize);
    const latest = await graphql('{ auditCheckpoint { treeSize note } auditVerifierKeys }');
    expect(latest.data?.auditCheckpoint).toMatchObject({
      treeSize: checkpoint.treeSize,
      note: checkpoint.note,
    });
    const [entry] = await exportHashes();
    const inclusion = await graphql(
      `{ auditInclusionProof(entryId: "${entry?.id}", treeSize: ${checkpoint.treeSize}) { treeSize leafIndex hashes } }`,
    );
    const proof = inclusion.data?.auditInclusionProof as { leafIndex: number; hashes: string[] };
    expect(proof.leafIndex).toBe(0);
    expect(
      verifyInclusion(
        auditLeafHash(entry?.hash as string),
        0,
        checkpoint.treeSize,
        proof.hashes.map((hash) => Buffer.from(hash, 'base64')),
        opened.rootHash,
      ),
    ).toBe(true);
    const consistency = await graphql(
      `{ auditConsistencyProof(first: 1, second: ${checkpoint.treeSize}) { treeSize first hashes } }`,
    );
    expect(consistency.data?.auditConsistencyProof).toMatchObject({
      treeSize: checkpoint.treeSize,
      first: 1,
    });
    const refused = await graphql(`{ auditConsistencyProof(first: 2, second: 1) { treeSize } }`);
    expect(refused.errors?.[0]?.extensions?.code).toBe('AUDIT_PROOF_SIZE_INVALID');
    const noScope = await graphql('{ auditCheckpoint { treeSize } }', gw.tenant.key);
    expect(noScope.errors?.[0]?.extensions?.code).toBe('AUTH_INSUFFICIENT_SCOPE');
  });

  it('signs with the new key after a rotation and keeps the retired key published', async () => {
    const before = await (await get('/api/v1/audit/checkpoint')).text();
    const [oldKey] = await verifierKeys();
    await rotateAuditKey(gw.db, gw.runtime.keyCustody);
    const keys = await verifierKeys();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(oldKey);
    // The next cut signs with the new key, even with nothing appended.
    const after = await (await get('/api/v1/audit/checkpoint', auditor, 'POST')).text();
    await openCheckpoint(after, keys[0]);
    await openCheckpoint(before, oldKey);
    const parsed = parseNote(after);
    const old = parseVerifierKey(oldKey as string);
    if (typeof parsed === 'string' || typeof old === 'string') throw new Error('unparsable');
    expect(noteSignedBy(parsed, old)).toBe(false);

    // Every tenant's DID document lists both, outside assertionMethod (they sign no credential).
    await gw.sync();
    const did = `did:svc:${gw.tenant.id}`;
    const response = await fetch(`${gw.url}/1.0/identifiers/${did}`, {
      headers: { accept: 'application/did+json' },
    });
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      verificationMethod: { id: string; publicKeyMultibase: string }[];
      assertionMethod: string[];
    };
    const multibase = (text: string) => {
      const parsedKey = parseVerifierKey(text);
      if (typeof parsedKey === 'string') throw new Error(parsedKey);
      return encodeEd25519PublicKey(parsedKey.publicKey);
    };
    const active = document.verificationMethod.find((m) => m.id === `${did}#audit-checkpoint`);
    expect(active?.publicKeyMultibase).toBe(multibase(keys[0] as string));
    const retired = document.verificationMethod.filter((m) =>
      m.id.startsWith(`${did}#audit-checkpoint-`),
    );
    expect(retired.map((m) => m.publicKeyMultibase)).toEqual([multibase(oldKey as string)]);
    expect(document.assertionMethod.some((id) => id.includes('audit-checkpoint'))).toBe(false);
  });
});
