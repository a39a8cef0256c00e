// Revoking an identity credential (revokeAgentCredential) sets its bit in the tenant's status
// list: a new version of the list, signed again by the tenant CA, stored and served by the
// in-process data plane before the mutation answers. An independent verifier reading that list
// (checkStatus of @digitalbazaar/vc-bitstring-status-list) sees the bit; the other credentials of
// the list stay valid. Audited once; a second revocation changes nothing.
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

const REVOKE = `mutation ($id: ID!, $reason: String!) {
  revokeAgentCredential(id: $id, reason: $reason) { id status revokedAt revokedReason document }
}`;

describeEachDatabase('revoking identity credentials', (kind) => {
  let gateway: AgentIamTestGateway;
  let revoked: Loose;
  let kept: Loose;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
    const issue = async () => {
      const answer = await gateway.issue({
        agent_id: gateway.agent.id,
        supervising_user_id: 'alice',
        ttl_seconds: 3600,
      });
      expect(answer.status).toBe(201);
      return answer.body.credential as Loose;
    };
    revoked = await issue();
    kept = await issue();
  }, 60_000);
  afterAll(() => gateway?.close());

  const tenantVersion = async () =>
    (await gateway.db.prisma.tenant.findUniqueOrThrow({ where: { id: gateway.tenant.id } }))
      .configVersion;

  it('sets the bit: the re-signed list a verifier reads reports the credential revoked, and only it', async () => {
    expect((await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, revoked)).revoked).toBe(
      false,
    );
    const versionBefore = await tenantVersion();
    const answer = await graphql<Loose>(gateway.url, gateway.managerKey, REVOKE, {
      id: revoked.id,
      reason: 'laptop stolen',
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data.revokeAgentCredential).toMatchObject({
      id: revoked.id,
      status: 'REVOKED',
      revokedAt: expect.any(String),
      revokedReason: 'laptop stolen',
    });
    // The credential itself is unchanged: revocation lives in the list.
    expect(answer.data.revokeAgentCredential.document).toEqual(revoked);

    const afterRevocation = await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, revoked);
    // The signatures (credential and list) still verify; the status result carries the bit.
    expect(afterRevocation.result.verified).toBe(true);
    expect(afterRevocation.revoked).toBe(true);
    // The data plane serves the new list as soon as the mutation has answered.
    const served = await verifyAsThirdParty(gateway.url, revoked);
    expect(served.result.verified).toBe(true);
    expect(served.revoked).toBe(true);
    const other = await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, kept);
    expect(other.result.verified).toBe(true);
    expect(other.revoked).toBe(false);

    const list = await gateway.db.prisma.statusList.findFirstOrThrow({
      where: { tenantId: gateway.tenant.id },
    });
    expect(list.version).toBe(2);
    const credential = list.credential as Loose;
    expect(credential.id).toBe(revoked.credentialStatus.statusListCredential);
    expect(credential.proof.verificationMethod).toBe(`did:svc:${gateway.tenant.id}#agentiam-ca`);
    const bits = await decodeList({ encodedList: credential.credentialSubject.encodedList });
    expect(bits.getStatus(Number(revoked.credentialStatus.statusListIndex))).toBe(true);
    expect(bits.getStatus(Number(kept.credentialStatus.statusListIndex))).toBe(false);

    // Published before the answer: the data plane serves this version, and data planes elsewhere
    // learn it from the bumped configVersion.
    expect(await tenantVersion()).toBeGreaterThan(versionBefore);
    const identity = gateway.runtime.store.current?.tenants.get(gateway.tenant.id)?.source.identity;
    expect(identity?.statusLists).toEqual([
      { id: list.id, version: 2, credential: list.credential },
    ]);
  });

  it('is audited with the reason and the API key that asked', async () => {
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: { tenantId: gateway.tenant.id, action: 'credential.revoked' },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      resourceType: 'identity_credential',
      resourceId: revoked.id,
    });
    expect(entries[0]?.metadata).toMatchObject({
      actorType: 'operator',
      actor: expect.stringMatching(/^api_key:/),
      agentId: gateway.agent.id,
      reason: 'laptop stolen',
      statusListIndex: Number(revoked.credentialStatus.statusListIndex),
    });
  });

  it('a second revocation changes nothing: same answer, no new list version, no new entry', async () => {
    const answer = await graphql<Loose>(gateway.url, gateway.managerKey, REVOKE, {
      id: revoked.id,
      reason: 'again',
    });
    expect(answer.data.revokeAgentCredential).toMatchObject({
      status: 'REVOKED',
      revokedReason: 'laptop stolen',
    });
    const list = await gateway.db.prisma.statusList.findFirstOrThrow({
      where: { tenantId: gateway.tenant.id },
    });
    expect(list.version).toBe(2);
    expect(
      await gateway.db.prisma.auditEntry.count({
        where: { tenantId: gateway.tenant.id, action: 'credential.revoked' },
      }),
    ).toBe(1);
  });

  it('lists the credential as REVOKED on its agent', async () => {
    const answer = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      'query ($id: ID!) { agent(id: $id) { identityCredentials { edges { node { id status } } } } }',
      { id: gateway.agent.id },
    );
    expect(answer.data.agent.identityCredentials.edges.map((edge: Loose) => edge.node)).toEqual(
      expect.arrayContaining([
        { id: revoked.id, status: 'REVOKED' },
        { id: kept.id, status: 'VALID' },
      ]),
    );
  });

  it("refuses another tenant's credential and an unknown one (NOT_FOUND), an empty reason (REQUEST_INVALID), a key without agents:manage", async () => {
    const other = await gateway.addTenant();
    const otherManager = await gateway.addApiKey(other.id, ['agents:manage']);
    const versionBefore = await tenantVersion();
    const cases: [string | undefined, Record<string, unknown>, string][] = [
      [otherManager, { id: kept.id, reason: 'not yours' }, 'NOT_FOUND'],
      [
        gateway.managerKey,
        { id: 'urn:uuid:00000000-0000-4000-8000-000000000000', reason: 'x' },
        'NOT_FOUND',
      ],
      [gateway.managerKey, { id: kept.id, reason: '' }, 'REQUEST_INVALID'],
      [gateway.managerKey, { id: kept.id, reason: 'r'.repeat(501) }, 'REQUEST_INVALID'],
      [gateway.tenant.key, { id: kept.id, reason: 'x' }, 'AUTH_INSUFFICIENT_SCOPE'],
    ];
    for (const [key, variables, code] of cases) {
      const answer = await graphql(gateway.url, key, REVOKE, variables);
      expect(errorCodes(answer), JSON.stringify(variables)).toEqual([code]);
    }
    const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: kept.id },
    });
    expect(stored.revokedAt).toBeNull();
    expect(await tenantVersion()).toBe(versionBefore);
    expect((await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, kept)).revoked).toBe(
      false,
    );
  });
});
