// Operators list and revoke issued access tokens through GraphQL (issuedTokens,
// revokeIssuedToken), on PGlite and PostgreSQL: rows minted through the token endpoint and
// inserted directly; filters by agent, client and activity, newest first; tenant isolation; a
// revocation puts the jti in the snapshot before answering, so introspection answers the real
// token active: false; audited once as oauth.token_revoked by the operator; idempotent;
// agents:manage required. No field exposes the token.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addClient,
  basic,
  postForm,
  type TestClient,
} from '../../data-plane/oauth/oauth-fixture.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';

const TOKEN_FIELDS = 'id agentId clientId audience scope issuedAt expiresAt revokedAt active';

describeEachDatabase('issued tokens on the management API', (kind) => {
  let gateway: TestGateway;
  let client: TestClient;
  let managerKey: string;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    client = await addClient(gateway);
    managerKey = await gateway.addApiKey(client.tenant.id, ['agents:manage']);
  }, 60_000);
  afterAll(() => gateway?.close());

  const auth = () => ({ authorization: basic(client.clientId, client.secret as string) });

  async function mint(resource = 'mcp://files'): Promise<{ token: string; jti: string }> {
    const answer = await postForm(
      `${gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource },
      auth(),
    );
    expect(answer.status).toBe(200);
    const token = answer.body.access_token as string;
    const payload = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
    await gateway.runtime.issuedTokens.flush();
    return { token, jti: payload.jti as string };
  }

  async function insert(fields: {
    tenantId?: string;
    agentId?: string;
    clientId?: string | null;
    issuedAt: Date;
    expiresAt: Date;
    revokedAt?: Date | null;
  }): Promise<string> {
    const id = randomUUID();
    await gateway.db.prisma.issuedToken.create({
      data: {
        id,
        tenantId: fields.tenantId ?? client.tenant.id,
        agentId: fields.agentId ?? client.agentId,
        clientId: fields.clientId === undefined ? client.clientId : fields.clientId,
        audience: 'mcp://other',
        scope: '',
        issuedAt: fields.issuedAt,
        expiresAt: fields.expiresAt,
        revokedAt: fields.revokedAt ?? null,
      },
    });
    return id;
  }

  const list = (args = '', key = managerKey) =>
    graphql<Loose>(
      gateway.url,
      key,
      `query { issuedTokens(first: 100${args}) { edges { node { ${TOKEN_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
    );
  const ids = (answer: Loose) => {
    expect(answer.errors).toBeUndefined();
    return answer.data.issuedTokens.edges.map((edge: Loose) => edge.node.id);
  };
  const revoke = (id: string, key = managerKey, reason?: string) =>
    graphql<Loose>(
      gateway.url,
      key,
      `mutation ($id: ID!, $reason: String) { revokeIssuedToken(id: $id, reason: $reason) { ${TOKEN_FIELDS} } }`,
      { id, reason },
    );

  describe('listing', () => {
    it('lists minted and recorded tokens newest first with their claims, filtered by agent, client and activity, never the token', async () => {
      const now = Date.now();
      const minted = await mint();
      const expired = await insert({
        issuedAt: new Date(now - 3_600_000),
        expiresAt: new Date(now - 3_000_000),
      });
      const revoked = await insert({
        issuedAt: new Date(now - 1_800_000),
        expiresAt: new Date(now + 600_000),
        revokedAt: new Date(now - 60_000),
      });
      const forward = await insert({
        clientId: null,
        issuedAt: new Date(now - 600_000),
        expiresAt: new Date(now + 300_000),
      });

      const all = await list();
      expect(ids(all)).toEqual([minted.jti, forward, revoked, expired]);
      const node = all.data.issuedTokens.edges[0].node;
      expect(node).toEqual({
        id: minted.jti,
        agentId: client.agentId,
        clientId: client.clientId,
        audience: 'mcp://files',
        scope: '',
        issuedAt: expect.any(String),
        expiresAt: expect.any(String),
        revokedAt: null,
        active: true,
      });
      expect(JSON.stringify(all)).not.toContain(minted.token);
      const byId = new Map(all.data.issuedTokens.edges.map((e: Loose) => [e.node.id, e.node]));
      expect((byId.get(forward) as Loose).clientId).toBeNull();
      expect((byId.get(expired) as Loose).active).toBe(false);
      expect((byId.get(revoked) as Loose).active).toBe(false);

      expect(ids(await list(', active: true'))).toEqual([minted.jti, forward]);
      expect(ids(await list(', active: false'))).toEqual([revoked, expired]);
      expect(ids(await list(`, clientId: "${client.clientId}"`))).toEqual([
        minted.jti,
        revoked,
        expired,
      ]);
      expect(ids(await list(`, agentId: "${client.agentId}"`))).toHaveLength(4);
      expect(ids(await list(', agentId: "agent_nobody"'))).toEqual([]);

      // Paging as the other connections do.
      const page = await graphql<Loose>(
        gateway.url,
        managerKey,
        'query { issuedTokens(first: 2) { edges { node { id } } pageInfo { hasNextPage endCursor } } }',
      );
      expect(page.data.issuedTokens.pageInfo.hasNextPage).toBe(true);
      const next = await graphql<Loose>(
        gateway.url,
        managerKey,
        'query ($after: String) { issuedTokens(first: 2, after: $after) { edges { node { id } } } }',
        { after: page.data.issuedTokens.pageInfo.endCursor },
      );
      expect(next.data.issuedTokens.edges.map((e: Loose) => e.node.id)).toEqual([revoked, expired]);
    });
  });

  describe('revocation', () => {
    it('revokes a real token: the jti is in the snapshot and introspection answers active: false before the mutation answers; audited once; again changes nothing', async () => {
      const { token, jti } = await mint();
      const introspect = async () =>
        (await postForm(`${gateway.url}/oauth/introspect`, { token }, auth())).body;
      expect((await introspect()).active).toBe(true);
      const version = async () =>
        (await gateway.db.prisma.tenant.findUniqueOrThrow({ where: { id: client.tenant.id } }))
          .configVersion;
      const before = await version();

      const first = await revoke(jti, managerKey, 'laptop stolen');
      expect(first.errors).toBeUndefined();
      const revokedAt = first.data.revokeIssuedToken.revokedAt;
      expect(revokedAt).toEqual(expect.any(String));
      expect(first.data.revokeIssuedToken.active).toBe(false);
      expect(await version()).toBe(before + 1);
      const snapshot = gateway.runtime.store.current?.tenants.get(client.tenant.id)?.source;
      expect(snapshot?.revokedTokens.map((t) => t.jti)).toContain(jti);
      expect(await introspect()).toEqual({ active: false });

      const again = await revoke(jti);
      expect(again.errors).toBeUndefined();
      expect(again.data.revokeIssuedToken.revokedAt).toBe(revokedAt);
      expect(await version()).toBe(before + 1);

      await gateway.runtime.audit.flush();
      const entries = await gateway.db.prisma.auditEntry.findMany({
        where: { tenantId: client.tenant.id, action: 'oauth.token_revoked', resourceId: jti },
      });
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ resourceType: 'access_token' });
      expect(entries[0]?.metadata).toMatchObject({
        actorType: 'operator',
        actor: expect.stringMatching(/^api_key:/),
        clientId: client.clientId,
        agentId: client.agentId,
        audience: 'mcp://files',
        reason: 'laptop stolen',
      });
    });

    it("another tenant's manager sees none of these tokens and cannot revoke them; an unknown jti is NOT_FOUND", async () => {
      const { jti } = await mint();
      const other = await gateway.addTenant();
      const otherKey = await gateway.addApiKey(other.id, ['agents:manage']);
      expect(ids(await list('', otherKey))).toEqual([]);
      expect(errorCodes(await revoke(jti, otherKey))).toEqual(['NOT_FOUND']);
      expect(errorCodes(await revoke(randomUUID()))).toEqual(['NOT_FOUND']);
      const row = await gateway.db.prisma.issuedToken.findUniqueOrThrow({ where: { id: jti } });
      expect(row.revokedAt).toBeNull();
    });

    it('issuedTokens and revokeIssuedToken need agents:manage', async () => {
      const executeOnly = await gateway.addApiKey(client.tenant.id, ['agents:execute']);
      expect(errorCodes(await list('', executeOnly))).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
      expect(errorCodes(await revoke(randomUUID(), executeOnly))).toEqual([
        'AUTH_INSUFFICIENT_SCOPE',
      ]);
    });
  });
});
