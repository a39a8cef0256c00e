// An agent's public key is unique within its tenant, not across tenants: the credential's tenant
// binds a key to its tenant. Two tenants may register the same key without either learning that
// the other holds it, and each sees only its own agent; the same key twice in one tenant is
// refused with REQUEST_INVALID naming the field, and nothing is written.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { quickDatabaseKind } from '../../data-plane/inspect/support.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, graphql, type Loose } from './support.js';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A fresh Ed25519 public key as multibase base58btc of the ed25519-pub multicodec (`z6Mk…`). */
function newPublicKey(): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  const bytes = Buffer.concat([Buffer.from([0xed, 0x01]), der.subarray(der.length - 32)]);
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let text = '';
  while (value > 0n) {
    text = BASE58[Number(value % 58n)] + text;
    value /= 58n;
  }
  return `z${text}`;
}

const CREATE_AGENT = 'mutation($i: CreateAgentInput!) { createAgent(input: $i) { id publicKey } }';
const AGENTS = '{ agents(first: 100) { edges { node { id publicKey } } } }';

describe('agent public keys are unique per tenant', () => {
  let gw: TestGateway;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    gw = await startTestGateway(quickDatabaseKind);
    keyA = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    const other = await gw.addTenant();
    keyB = await gw.addApiKey(other.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  const create = (key: string, publicKey: string) =>
    graphql<Loose>(gw.url, key, CREATE_AGENT, {
      i: { name: 'twin', publicKey, allowedTools: ['echo'] },
    });
  const createdEntries = () =>
    gw.db.prisma.auditEntry.count({ where: { tenantId: gw.tenant.id, action: 'agent.created' } });
  const agentsOf = async (key: string) =>
    ((await graphql<Loose>(gw.url, key, AGENTS)).data?.agents.edges ?? []).map(
      (edge: Loose) => edge.node,
    ) as { id: string; publicKey: string }[];

  it('lets two tenants register the same key; each sees only its own agent', async () => {
    const shared = newPublicKey();
    const a = await create(keyA, shared);
    expect(a.errors).toBeUndefined();
    const b = await create(keyB, shared);
    expect(b.errors).toBeUndefined();
    expect(a.data.createAgent.id).not.toBe(b.data.createAgent.id);

    const seenByA = (await agentsOf(keyA)).filter((agent) => agent.publicKey === shared);
    const seenByB = (await agentsOf(keyB)).filter((agent) => agent.publicKey === shared);
    expect(seenByA.map((agent) => agent.id)).toEqual([a.data.createAgent.id]);
    expect(seenByB.map((agent) => agent.id)).toEqual([b.data.createAgent.id]);
    // Both agents serve: the snapshot holds each within its tenant.
    const served = gw.runtime.store.current;
    expect(served?.tenants.get(gw.tenant.id)?.agentsByPublicKey.get(shared)?.id).toBe(
      a.data.createAgent.id,
    );
  });

  it('refuses the same key twice in one tenant, naming the field, and writes nothing', async () => {
    const key = newPublicKey();
    expect((await create(keyA, key)).errors).toBeUndefined();
    const before = await agentsOf(keyA);
    const createdBefore = await createdEntries();
    const versionBefore = await gw.db.prisma.tenant.findUniqueOrThrow({
      where: { id: gw.tenant.id },
    });

    const again = await create(keyA, key);
    expect(errorCodes(again)).toEqual(['REQUEST_INVALID']);
    expect(again.errors?.[0]?.message).toContain('input.publicKey');
    expect(again.errors?.[0]?.extensions?.issues).toEqual([
      { field: 'input.publicKey', message: 'is already taken by another Agent' },
    ]);
    expect(again.data?.createAgent ?? null).toBeNull();
    expect(await agentsOf(keyA)).toEqual(before);
    const versionAfter = await gw.db.prisma.tenant.findUniqueOrThrow({
      where: { id: gw.tenant.id },
    });
    expect(versionAfter.configVersion).toBe(versionBefore.configVersion);
    expect(await createdEntries()).toBe(createdBefore);
  });
});
