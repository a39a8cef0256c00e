// Rotating the tenant CA key (rotateSigningKey, DESIGN.md §6): a new key becomes #agentiam-ca;
// every live credential keeps its id, dates and status entry and gets a new proof that a standard
// verifier accepts with the new DID document; revoked credentials are left as they are; the
// status lists are signed again; the old key is retired, resolvable until the latest expiry of
// the live credentials it signed. Audited, and published before the mutation answers.
import { decodeList } from '@digitalbazaar/vc-bitstring-status-list';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentIamTestGateway,
  startAgentIamGateway,
  verifyAsStandardVerifier,
  verifyAsThirdParty,
} from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';

const ROTATE = `mutation {
  rotateSigningKey {
    signingKey { id publicKeyMultibase status createdAt retiredAt resolvableUntil }
    retiredKeys { id publicKeyMultibase status retiredAt resolvableUntil }
    reissuedCredentials
    resignedStatusLists
  }
}`;

describeEachDatabase('rotating the tenant CA key', (kind) => {
  let gateway: AgentIamTestGateway;
  let shortLived: Loose;
  let longLived: Loose;
  let revoked: Loose;
  let oldKey: { id: string; publicKey: string };
  let rotation: Loose;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
    const issue = async (ttl: number) => {
      const answer = await gateway.issue({
        agent_id: gateway.agent.id,
        supervising_user_id: 'alice',
        ttl_seconds: ttl,
      });
      expect(answer.status).toBe(201);
      return answer.body.credential as Loose;
    };
    shortLived = await issue(3600);
    longLived = await issue(7200);
    // Revoked, and the longest-lived: it must neither be re-issued nor extend the old key's window.
    revoked = await issue(2_592_000);
    const answer = await graphql(
      gateway.url,
      gateway.managerKey,
      'mutation ($id: ID!) { revokeAgentCredential(id: $id, reason: "test") { id } }',
      { id: revoked.id },
    );
    expect(answer.errors).toBeUndefined();
    oldKey = await gateway.db.prisma.tenantSigningKey.findFirstOrThrow({
      where: { tenantId: gateway.tenant.id },
    });
    const rotated = await graphql<Loose>(gateway.url, gateway.managerKey, ROTATE);
    expect(rotated.errors).toBeUndefined();
    rotation = rotated.data.rotateSigningKey;
  }, 60_000);
  afterAll(() => gateway?.close());

  it('makes a new active key and retires the old one until its live credentials expire', async () => {
    expect(rotation.signingKey).toMatchObject({
      status: 'ACTIVE',
      retiredAt: null,
      resolvableUntil: null,
      publicKeyMultibase: expect.stringMatching(/^z6Mk/),
    });
    expect(rotation.signingKey.id).not.toBe(oldKey.id);
    expect(rotation.signingKey.publicKeyMultibase).not.toBe(oldKey.publicKey);
    expect(rotation.retiredKeys).toEqual([
      {
        id: oldKey.id,
        publicKeyMultibase: oldKey.publicKey,
        status: 'RETIRED',
        retiredAt: expect.any(String),
        resolvableUntil: new Date(longLived.expirationDate).toISOString(),
      },
    ]);
    expect(rotation.reissuedCredentials).toBe(2);
    expect(rotation.resignedStatusLists).toBe(1);

    const keys = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      '{ signingKeys { id status } }',
    );
    expect(keys.data.signingKeys).toEqual([
      { id: rotation.signingKey.id, status: 'ACTIVE' },
      { id: oldKey.id, status: 'RETIRED' },
    ]);
  });

  it('re-issues live credentials: same id, dates and status entry, a new proof a standard verifier accepts', async () => {
    for (const before of [shortLived, longLived]) {
      const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
        where: { id: before.id },
      });
      expect(stored.signingKeyId).toBe(rotation.signingKey.id);
      const { proof, ...rest } = stored.document as Loose;
      const { proof: oldProof, ...unsigned } = before;
      expect(rest).toEqual(unsigned);
      expect(proof.proofValue).not.toBe(oldProof.proofValue);
      expect(proof.verificationMethod).toBe(`did:svc:${gateway.tenant.id}#agentiam-ca`);
      const verified = await verifyAsStandardVerifier(
        gateway.db,
        gateway.tenant.id,
        stored.document,
      );
      expect(verified.result.error).toBeUndefined();
      expect(verified.result.verified).toBe(true);
      expect(verified.revoked).toBe(false);
      expect(
        (await verifyAsThirdParty(gateway.url, stored.document as Loose)).result.verified,
      ).toBe(true);
      // A standard verifier sees only the current key: the copy signed before no longer verifies.
      const old = await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, before);
      expect(old.result.verified).toBe(false);
    }
  });

  it('leaves revoked credentials as they were, and keeps their bit in the re-signed list', async () => {
    const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: revoked.id },
    });
    expect(stored.signingKeyId).toBe(oldKey.id);
    expect(stored.document).toEqual(revoked);
    const list = await gateway.db.prisma.statusList.findFirstOrThrow({
      where: { tenantId: gateway.tenant.id },
    });
    // 1 at creation, 2 after the revocation, 3 after the rotation.
    expect(list.version).toBe(3);
    const credential = list.credential as Loose;
    expect(credential.proof.verificationMethod).toBe(`did:svc:${gateway.tenant.id}#agentiam-ca`);
    const bits = await decodeList({ encodedList: credential.credentialSubject.encodedList });
    expect(bits.getStatus(Number(revoked.credentialStatus.statusListIndex))).toBe(true);
    expect(bits.getStatus(Number(longLived.credentialStatus.statusListIndex))).toBe(false);
  });

  it('publishes the new key and the retired one in its window to the data plane', async () => {
    const served = gateway.runtime.store.current?.tenants.get(gateway.tenant.id)?.source.identity;
    expect(served?.caKeys).toEqual([
      {
        id: rotation.signingKey.id,
        publicKeyMultibase: rotation.signingKey.publicKeyMultibase,
        status: 'active',
        resolvableUntil: null,
      },
      {
        id: oldKey.id,
        publicKeyMultibase: oldKey.publicKey,
        status: 'retired',
        resolvableUntil: rotation.retiredKeys[0].resolvableUntil,
      },
    ]);
    expect(served?.statusLists[0]?.version).toBe(3);
  });

  it('signs new credentials with the new key', async () => {
    const answer = await gateway.issue({ agent_id: gateway.agent.id, supervising_user_id: 'bob' });
    expect(answer.status).toBe(201);
    const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: answer.body.credentialId as string },
    });
    expect(stored.signingKeyId).toBe(rotation.signingKey.id);
    expect(
      (await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, answer.body.credential)).result
        .verified,
    ).toBe(true);
  });

  it('is audited with the keys and what was re-issued', async () => {
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: { tenantId: gateway.tenant.id, action: 'signing_key.rotated' },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      resourceType: 'signing_key',
      resourceId: rotation.signingKey.id,
    });
    expect(entries[0]?.metadata).toMatchObject({
      actorType: 'operator',
      actor: expect.stringMatching(/^api_key:/),
      retiredKeyIds: [oldKey.id],
      reissuedCredentials: 2,
      resignedStatusLists: 1,
    });
  });

  it('gives a tenant without a key its first one, and refuses a key without agents:manage', async () => {
    const tenant = await gateway.addTenant();
    const manager = await gateway.addApiKey(tenant.id, ['agents:manage']);
    const answer = await graphql<Loose>(gateway.url, manager, ROTATE);
    expect(answer.errors).toBeUndefined();
    expect(answer.data.rotateSigningKey).toMatchObject({
      signingKey: { status: 'ACTIVE' },
      retiredKeys: [],
      reissuedCredentials: 0,
      resignedStatusLists: 0,
    });
    expect(errorCodes(await graphql(gateway.url, tenant.key, ROTATE))).toEqual([
      'AUTH_INSUFFICIENT_SCOPE',
    ]);
    expect(await gateway.db.prisma.tenantSigningKey.count({ where: { tenantId: tenant.id } })).toBe(
      1,
    );
  });
});
