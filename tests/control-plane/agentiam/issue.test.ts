// Issuing agent identity credentials through POST /api/v1/agentiam/credentials/issue and the
// issueAgentCredential mutation, over real HTTP, on PGlite and PostgreSQL: what is issued is a
// W3C credential an independent verifier (Digital Bazaar's verifyCredential with our committed
// contexts and the tenant's DID document) accepts; the tenant CA key is made once, stored sealed,
// and published with the status list; every refusal has its exact status and code and writes
// nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyMaterialFromSeed } from '../../../shared/agentiam/ed25519-keys.js';
import { unseal } from '../../../shared/crypto/seal.js';
import {
  type AgentIamTestGateway,
  startAgentIamGateway,
  verifyAsStandardVerifier,
  verifyAsThirdParty,
} from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';

const ISSUED_FIELDS = `id agentId supervisingUserId permittedTools issuedAt expiresAt revokedAt
  revokedReason status signingKeyId document`;

describeEachDatabase('issuing identity credentials', (kind) => {
  let gateway: AgentIamTestGateway;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
  }, 60_000);
  afterAll(() => gateway?.close());

  const seconds = (iso: unknown) => Date.parse(iso as string) / 1000;

  it('answers 201 with a credential a standard verifier accepts, signed by a new sealed tenant CA key', async () => {
    const tenantId = gateway.tenant.id;
    const answer = await gateway.issue({
      agent_id: gateway.agent.id,
      supervising_user_id: 'alice@example.com',
      ttl_seconds: 3600,
    });
    expect(answer.status).toBe(201);
    const { credential, credentialId, expiresAt, statusListCredential } = answer.body as Loose;
    expect(credentialId).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(statusListCredential).toMatch(
      new RegExp(`^${gateway.url}/api/v1/agentiam/status-lists/[0-9a-f-]{36}$`),
    );
    expect(credential).toMatchObject({
      '@context': [
        'https://www.w3.org/2018/credentials/v1',
        'https://www.w3.org/ns/credentials/status/v1',
        'https://w3id.org/security/suites/ed25519-2020/v1',
        'https://agent-gateway.dev/contexts/agentiam/v1',
      ],
      id: credentialId,
      type: ['VerifiableCredential', 'AgentIdentityCredential'],
      issuer: `did:svc:${tenantId}`,
      expirationDate: expiresAt,
      credentialSubject: {
        id: `did:key:${gateway.agent.publicKey}`,
        tenantId,
        agentId: gateway.agent.id,
        permittedTools: ['read_file', 'search'],
        nonTransferable: true,
        supervisingUserId: 'alice@example.com',
      },
      credentialStatus: {
        id: `${statusListCredential}#0`,
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: '0',
        statusListCredential,
      },
      proof: {
        type: 'Ed25519Signature2020',
        proofPurpose: 'assertionMethod',
        verificationMethod: `did:svc:${tenantId}#agentiam-ca`,
      },
    });
    expect(expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(seconds(expiresAt) - seconds(credential.issuanceDate)).toBe(3600);

    const verified = await verifyAsStandardVerifier(gateway.db, tenantId, credential);
    expect(verified.result.error).toBeUndefined();
    expect(verified.result.verified).toBe(true);
    expect(verified.revoked).toBe(false);
    // And with the DID document and status list the gateway serves, fetched over HTTP.
    const served = await verifyAsThirdParty(gateway.url, credential);
    expect(served.result.verified).toBe(true);
    expect(served.revoked).toBe(false);

    // Stored as issued, with the key that signed it, which is the tenant's one CA key.
    const keys = await gateway.db.prisma.tenantSigningKey.findMany({ where: { tenantId } });
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    expect(key).toMatchObject({ purpose: 'agentiam-ca', status: 'active', retiredAt: null });
    const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: credentialId },
    });
    expect(stored).toMatchObject({
      agentId: gateway.agent.id,
      signingKeyId: key.id,
      statusListIndex: 0,
      permittedTools: ['read_file', 'search'],
      supervisingUserId: 'alice@example.com',
      revokedAt: null,
    });
    expect(stored.document).toEqual(credential);
    expect(stored.expiresAt.toISOString()).toBe(expiresAt.replace('Z', '.000Z'));

    // Sealed at rest: opens only with the master key and this row's tenant and kid, and no
    // column holds the seed in any common encoding.
    const seed = unseal(gateway.masterKey, key.privateKeySealed, `${tenantId}/${key.id}`);
    expect(keyMaterialFromSeed(seed).publicKeyMultibase).toBe(key.publicKey);
    expect(key.privateKeySealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    const row = JSON.stringify(
      await gateway.db.query('select * from tenant_signing_keys where id = $1', [key.id]),
    );
    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      expect(row).not.toContain(Buffer.from(seed).toString(encoding).replace(/=+$/, ''));
    }
    expect(() =>
      unseal(gateway.masterKey, key.privateKeySealed, `${gateway.tenant.id}/another-kid`),
    ).toThrow(expect.objectContaining({ code: 'MASTER_KEY_MISMATCH' }));

    // The in-process data plane serves the new key and the signed list before the answer.
    const identity = gateway.runtime.store.current?.tenants.get(tenantId)?.source.identity;
    expect(identity?.caKeys).toEqual([
      { id: key.id, publicKeyMultibase: key.publicKey, status: 'active', resolvableUntil: null },
    ]);
    expect(identity?.statusLists.map((list) => list.credential.id)).toEqual([statusListCredential]);
  });

  it('takes the next status index of the same list and the same key, with a 24 h default lifetime and no supervising user', async () => {
    const answer = await gateway.issue({ agent_id: gateway.agent.id });
    expect(answer.status).toBe(201);
    const credential = answer.body.credential as Loose;
    expect(seconds(credential.expirationDate) - seconds(credential.issuanceDate)).toBe(86_400);
    expect(credential.credentialStatus.statusListIndex).toBe('1');
    // supervising_user_id is optional (spec §4.6 does not require it, spawn never did): the
    // credential then names no supervising user, the row and the audit entry hold null.
    expect(credential.credentialSubject).not.toHaveProperty('supervisingUserId');
    const stored = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: answer.body.credentialId as string },
    });
    expect(stored.supervisingUserId).toBeNull();
    const audited = await gateway.db.prisma.auditEntry.findFirstOrThrow({
      where: { resourceId: stored.id, action: 'credential.issued' },
    });
    expect(audited.metadata).toMatchObject({ supervisingUserId: null });
    expect(
      await gateway.db.prisma.tenantSigningKey.count({ where: { tenantId: gateway.tenant.id } }),
    ).toBe(1);
    expect(
      await gateway.db.prisma.statusList.count({ where: { tenantId: gateway.tenant.id } }),
    ).toBe(1);
    expect(
      (await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, credential)).result,
    ).toMatchObject({ verified: true });
  });

  it('accepts the bounds of ttl_seconds: 60 s and 30 days', async () => {
    for (const ttl of [60, 2_592_000]) {
      const answer = await gateway.issue({
        agent_id: gateway.agent.id,
        supervising_user_id: 'bob',
        ttl_seconds: ttl,
      });
      expect(answer.status).toBe(201);
      const credential = answer.body.credential as Loose;
      expect(seconds(credential.expirationDate) - seconds(credential.issuanceDate)).toBe(ttl);
    }
  });

  it('issues through GraphQL too, and lists the agent credentials and the tenant CA keys', async () => {
    const issued = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      `mutation ($agentId: ID!) {
        issueAgentCredential(agentId: $agentId, supervisingUserId: "carol", ttlSeconds: 120) {
          ${ISSUED_FIELDS}
        }
      }`,
      { agentId: gateway.agent.id },
    );
    expect(issued.errors).toBeUndefined();
    const credential = issued.data.issueAgentCredential;
    expect(credential).toMatchObject({
      agentId: gateway.agent.id,
      supervisingUserId: 'carol',
      permittedTools: ['read_file', 'search'],
      revokedAt: null,
      revokedReason: null,
      status: 'VALID',
    });
    expect(Date.parse(credential.expiresAt) - Date.parse(credential.issuedAt)).toBe(120_000);
    expect(credential.document.id).toBe(credential.id);
    expect(
      (await verifyAsStandardVerifier(gateway.db, gateway.tenant.id, credential.document)).result,
    ).toMatchObject({ verified: true });
    const unsupervised = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      'mutation ($agentId: ID!) { issueAgentCredential(agentId: $agentId) { supervisingUserId document } }',
      { agentId: gateway.agent.id },
    );
    expect(unsupervised.errors).toBeUndefined();
    expect(unsupervised.data.issueAgentCredential.supervisingUserId).toBeNull();
    expect(unsupervised.data.issueAgentCredential.document.credentialSubject).not.toHaveProperty(
      'supervisingUserId',
    );

    const listed = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      `query ($id: ID!) {
        agent(id: $id) { identityCredentials(first: 10) { edges { node { id status } } } }
        signingKeys { id publicKeyMultibase status retiredAt resolvableUntil }
      }`,
      { id: gateway.agent.id },
    );
    expect(listed.errors).toBeUndefined();
    const nodes = listed.data.agent.identityCredentials.edges.map((edge: Loose) => edge.node);
    expect(nodes).toHaveLength(6);
    expect(nodes).toContainEqual({ id: credential.id, status: 'VALID' });
    expect(listed.data.signingKeys).toEqual([
      {
        id: credential.signingKeyId,
        publicKeyMultibase: expect.stringMatching(/^z6Mk/),
        status: 'ACTIVE',
        retiredAt: null,
        resolvableUntil: null,
      },
    ]);
  });

  it('audits the key creation (system) and every issuance (the API key that asked)', async () => {
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: {
        tenantId: gateway.tenant.id,
        action: { in: ['signing_key.created', 'credential.issued'] },
      },
      orderBy: { seq: 'asc' },
    });
    expect(entries.map((entry) => entry.action)).toEqual([
      'signing_key.created',
      'credential.issued',
      'credential.issued',
      'credential.issued',
      'credential.issued',
      'credential.issued',
      'credential.issued',
    ]);
    expect(entries[0]?.metadata).toMatchObject({ actorType: 'system', purpose: 'agentiam-ca' });
    expect(entries[1]).toMatchObject({ resourceType: 'identity_credential' });
    expect(entries[1]?.metadata).toMatchObject({
      actorType: 'operator',
      actor: expect.stringMatching(/^api_key:/),
      agentId: gateway.agent.id,
      supervisingUserId: 'alice@example.com',
      statusListIndex: 0,
    });
  });
});

describeEachDatabase('refusing to issue', (kind) => {
  let gateway: AgentIamTestGateway;
  let tenantId: string;
  let managerKey: string;
  let agentId: string;
  let killedAgentId: string;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
    // A tenant of its own: no refusal below may leave a CA key, a status list or an entry.
    const tenant = await gateway.addTenant();
    tenantId = tenant.id;
    managerKey = await gateway.addApiKey(tenantId, ['agents:manage']);
    agentId = await gateway.addKeyedAgent(tenantId);
    killedAgentId = await gateway.addKeyedAgent(tenantId);
    await gateway.db.prisma.agent.update({
      where: { id: killedAgentId },
      data: { status: 'killed', killedAt: new Date(), killedReason: 'test' },
    });
    await gateway.sync();
  }, 60_000);
  afterAll(async () => {
    // Nothing was written for the tenant by any refusal.
    const { prisma } = gateway.db;
    expect(await prisma.identityCredential.count({ where: { tenantId } })).toBe(0);
    expect(await prisma.tenantSigningKey.count({ where: { tenantId } })).toBe(0);
    expect(await prisma.statusList.count({ where: { tenantId } })).toBe(0);
    expect(
      await prisma.auditEntry.count({
        where: { tenantId, action: { in: ['credential.issued', 'signing_key.created'] } },
      }),
    ).toBe(0);
    await gateway?.close();
  });

  const valid = () => ({ agent_id: agentId, supervising_user_id: 'alice', ttl_seconds: 3600 });

  it.each([
    ['ttl_seconds below 60', { ttl_seconds: 59 }, 'ttl_seconds'],
    ['ttl_seconds above 30 days', { ttl_seconds: 2_592_001 }, 'ttl_seconds'],
    ['ttl_seconds as a string', { ttl_seconds: '3600' }, 'ttl_seconds'],
    ['ttl_seconds not whole', { ttl_seconds: 60.5 }, 'ttl_seconds'],
    ['ttl_seconds null', { ttl_seconds: null }, 'ttl_seconds'],
    ['agent_id missing', { agent_id: undefined }, 'agent_id'],
    ['agent_id not a string', { agent_id: 42 }, 'agent_id'],
    ['agent_id empty', { agent_id: '' }, 'agent_id'],
    ['supervising_user_id empty', { supervising_user_id: '' }, 'supervising_user_id'],
    [
      'supervising_user_id too long',
      { supervising_user_id: 'u'.repeat(257) },
      'supervising_user_id',
    ],
    ['an unknown field', { agentId: 'x' }, 'agentId'],
  ])('%s: 400 REQUEST_INVALID naming the field', async (_case, change, field) => {
    const answer = await gateway.issue({ ...valid(), ...change }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'REQUEST_INVALID', reasonCode: 'REQUEST_INVALID' });
    expect(answer.body.message).toContain(field);
    expect((answer.body as Loose).issues.map((issue: Loose) => issue.field)).toContain(field);
  });

  it.each([
    ['not JSON', '{"agent_id": '],
    ['a JSON array', '[]'],
    ['a JSON string', '"issue"'],
  ])('a body that is %s: 400 REQUEST_INVALID', async (_case, body) => {
    const answer = await gateway.issue(body, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body.reasonCode).toBe('REQUEST_INVALID');
  });

  it('a text/plain body: 415 REQUEST_UNSUPPORTED_MEDIA_TYPE', async () => {
    const answer = await gateway.issue(JSON.stringify(valid()), {
      key: managerKey,
      contentType: 'text/plain',
    });
    expect(answer.status).toBe(415);
    expect(answer.body.reasonCode).toBe('REQUEST_UNSUPPORTED_MEDIA_TYPE');
  });

  it('an unknown agent: 404 NOT_FOUND', async () => {
    const answer = await gateway.issue(
      { ...valid(), agent_id: '00000000-0000-4000-8000-000000000000' },
      { key: managerKey },
    );
    expect(answer.status).toBe(404);
    expect(answer.body.reasonCode).toBe('NOT_FOUND');
  });

  it("another tenant's agent: 404 NOT_FOUND, as if it did not exist", async () => {
    const answer = await gateway.issue(
      { ...valid(), agent_id: gateway.agent.id },
      { key: managerKey },
    );
    expect(answer.status).toBe(404);
    expect(answer.body.reasonCode).toBe('NOT_FOUND');
  });

  it('a killed agent: 403 AGENT_REVOKED', async () => {
    const answer = await gateway.issue(
      { ...valid(), agent_id: killedAgentId },
      { key: managerKey },
    );
    expect(answer.status).toBe(403);
    expect(answer.body.reasonCode).toBe('AGENT_REVOKED');
  });

  it('an agent without an Ed25519 z6Mk key: 400 REQUEST_INVALID naming agentId', async () => {
    const legacy = await gateway.addAgent(tenantId);
    const answer = await gateway.issue({ ...valid(), agent_id: legacy }, { key: managerKey });
    expect(answer.status).toBe(400);
    expect(answer.body.reasonCode).toBe('REQUEST_INVALID');
    expect(answer.body.message).toContain('z6Mk');
  });

  it('no API key: 401 AUTH_INVALID_API_KEY', async () => {
    const answer = await gateway.issue(valid(), { key: null });
    expect(answer.status).toBe(401);
    expect(answer.body.reasonCode).toBe('AUTH_INVALID_API_KEY');
  });

  it('a key without agents:manage: 403 AUTH_INSUFFICIENT_SCOPE', async () => {
    const executeOnly = await gateway.addApiKey(tenantId, ['agents:execute']);
    const answer = await gateway.issue(valid(), { key: executeOnly });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({
      reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
      requiredScope: 'agents:manage',
    });
  });

  it.each([
    ['ttlSeconds: 59', 'ttlSeconds: 59', 'REQUEST_INVALID'],
    ['ttlSeconds: 2592001', 'ttlSeconds: 2592001', 'REQUEST_INVALID'],
    ['an empty supervisingUserId', 'supervisingUserId: ""', 'REQUEST_INVALID'],
  ])('GraphQL with %s: REQUEST_INVALID', async (_case, argument, code) => {
    const args = argument.startsWith('supervisingUserId')
      ? `agentId: "${agentId}", ${argument}`
      : `agentId: "${agentId}", supervisingUserId: "alice", ${argument}`;
    const answer = await graphql(
      gateway.url,
      managerKey,
      `mutation { issueAgentCredential(${args}) { id } }`,
    );
    expect(errorCodes(answer)).toEqual([code]);
    const field = argument.split(':')[0] as string;
    expect(JSON.stringify(answer.errors)).toContain(field);
  });

  it('GraphQL for an unknown or killed agent: NOT_FOUND, AGENT_REVOKED', async () => {
    for (const [id, code] of [
      ['00000000-0000-4000-8000-000000000000', 'NOT_FOUND'],
      [killedAgentId, 'AGENT_REVOKED'],
    ]) {
      const answer = await graphql(
        gateway.url,
        managerKey,
        'mutation ($id: ID!) { issueAgentCredential(agentId: $id, supervisingUserId: "a") { id } }',
        { id },
      );
      expect(errorCodes(answer)).toEqual([code]);
    }
  });

  it('GraphQL with a key without agents:manage: AUTH_INSUFFICIENT_SCOPE', async () => {
    const executeOnly = await gateway.addApiKey(tenantId, ['agents:execute']);
    const answer = await graphql(
      gateway.url,
      executeOnly,
      'mutation ($id: ID!) { issueAgentCredential(agentId: $id, supervisingUserId: "a") { id } }',
      { id: agentId },
    );
    expect(errorCodes(answer)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });
});
