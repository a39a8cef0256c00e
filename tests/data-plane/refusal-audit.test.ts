// Refusals of a known tenant leave a bounded trace (issue 22 item 12; docs/security.md, "Refusal
// auditing"): a real gateway with a real SDK upstream, the refusal auditor's clock injected so a
// window ends when the test says (no minute of sleep). Each wired refusal answers exactly as
// before, writes nothing else, and writes one `auth.refused` entry naming its code, subject and
// route; a burst writes that entry and one `auth.refused_summary` with the count of the rest.
import { randomUUID } from 'node:crypto';
import { CompactSign, importJWK } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { agentVerificationMethodId } from '../../shared/agentiam/dids.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../shared/agentiam/ed25519-keys.js';
import { verifyAuditChain } from '../../shared/audit/index.js';
import { parseApiKey } from '../../shared/identity/api-keys.js';
import { decodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';
import { type ProxyFixture, startProxyFixture } from '../mcp-proxy/support.js';
import {
  apiKeyHeaders,
  expectRefusal,
  initializeMessage,
  mcpFetch,
  openRawSession,
  toolsCall,
} from '../mcp-proxy/transport-support.js';
import { exportAll } from '../storage/fixtures/audit.js';
import { issueCredential } from '../support/agentiam-client.js';
import { describeEachDatabase } from '../support/databases.js';
import { inspectBody, postAsClient, type TestGateway } from '../support/gateway.js';
import { killAgent } from './inspect/support.js';
import { basic, issuedCount, postForm, registerClientOf } from './oauth/oauth-fixture.js';

const KILL_ROUTE = 'POST /api/v2/infrastructure/agents/:agentPublicKey/kill';
const SOME_AGENT_KEY = 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

interface Entry {
  readonly id: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly metadata: Record<string, unknown>;
}

describeEachDatabase('refusal auditing', (kind) => {
  let fixture: ProxyFixture;
  let gateway: TestGateway;
  let tenantId: string;
  let clock = Date.parse('2026-12-01T10:00:00.000Z');

  beforeAll(async () => {
    fixture = await startProxyFixture(kind, {}, { refusalAudit: { now: () => clock } });
    gateway = fixture.gateway;
    tenantId = gateway.tenant.id;
  });
  afterAll(async () => {
    await fixture?.close();
  });

  /** The refusal entries of a subject, in chain order. */
  async function refusalsOf(subject: string): Promise<Entry[]> {
    const rows = await gateway.db.query<Entry>(
      `select id, action, "resourceType", "resourceId", metadata from audit_entries
        where "tenantId" = $1 and action like 'auth.refused%' and "resourceId" = $2 order by seq`,
      [tenantId, subject],
    );
    return rows.map((row) => ({
      ...row,
      metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
    }));
  }

  /** Moves the auditor's clock past every open window and writes their summaries. */
  async function endWindows(): Promise<void> {
    clock += 61_000;
    await gateway.runtime.refusals.sweep();
  }

  async function keyIdOf(key: string): Promise<string> {
    const prefix = parseApiKey(key)!.prefix;
    const [row] = await gateway.db.query<{ id: string }>(
      'select id from api_keys where prefix = $1',
      [prefix],
    );
    return row!.id;
  }

  it('a burst of 50 wrong-scope requests: one entry of its own and one summary counting 49', async () => {
    const key = await gateway.addApiKey(tenantId, ['audit:read']);
    const keyId = await keyIdOf(key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        postAsClient(
          `${gateway.url}/api/v2/infrastructure/agents/${SOME_AGENT_KEY}/kill`,
          { reason: 'x' },
          { key },
        ).then(async (response) => ({ status: response.status, body: await response.json() })),
      ),
    );
    for (const answer of answers) {
      expect({ status: answer.status, reasonCode: answer.body.reasonCode }).toEqual({
        status: 403,
        reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
      });
    }
    expect(await gateway.db.query('select id from agent_kills')).toEqual([]);

    const [first, ...none] = await refusalsOf(keyId);
    expect(none).toEqual([]);
    expect(first).toMatchObject({
      action: 'auth.refused',
      resourceType: 'api_key',
      resourceId: keyId,
      metadata: {
        actorType: 'operator',
        reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
        subjectType: 'api_key',
        subject: keyId,
        route: KILL_ROUTE,
        detail: expect.stringContaining('agents:kill'),
      },
    });

    await endWindows();
    const entries = await refusalsOf(keyId);
    expect(entries).toHaveLength(2);
    expect(entries[1]).toMatchObject({
      action: 'auth.refused_summary',
      resourceType: 'api_key',
      resourceId: keyId,
      metadata: {
        reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
        subject: keyId,
        count: 49,
        firstEntryId: first!.id,
        routes: [KILL_ROUTE],
      },
    });

    // The next minute's first refusal is an entry of its own again.
    const again = await postAsClient(
      `${gateway.url}/api/v2/infrastructure/agents/${SOME_AGENT_KEY}/kill`,
      { reason: 'x' },
      { key },
    );
    expect(again.status).toBe(403);
    expect((await refusalsOf(keyId)).map((entry) => entry.action)).toEqual([
      'auth.refused',
      'auth.refused_summary',
      'auth.refused',
    ]);
  });

  it('a control-plane REST route refusing a scope (POST /api/v1/agents/spawn)', async () => {
    const key = await gateway.addApiKey(tenantId, ['audit:read']);
    const keyId = await keyIdOf(key);
    const agentsBefore = await gateway.db.query('select id from agents');
    const response = await postAsClient(
      `${gateway.url}/api/v1/agents/spawn`,
      { name: 'spawned' },
      { key },
    );
    expect(response.status).toBe(403);
    expect(((await response.json()) as { reasonCode: string }).reasonCode).toBe(
      'AUTH_INSUFFICIENT_SCOPE',
    );
    expect(await gateway.db.query('select id from agents')).toEqual(agentsBefore);
    expect(await refusalsOf(keyId)).toMatchObject([
      {
        action: 'auth.refused',
        metadata: {
          reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
          subject: keyId,
          route: 'POST /api/v1/agents/spawn',
        },
      },
    ]);
  });

  it('a proxy session used by another agent: 403 MCP_SESSION_FORBIDDEN, audited under the caller', async () => {
    const { proxyUrl, upstream } = fixture;
    const { sessionId } = await openRawSession(
      proxyUrl,
      apiKeyHeaders(gateway.tenant.key, gateway.tenant.agentId),
    );
    const stranger = await gateway.addAgent(tenantId);
    const seen = upstream.log.length;
    const answer = await mcpFetch(proxyUrl, {
      body: toolsCall('echo', { text: 'stolen' }),
      headers: { ...apiKeyHeaders(gateway.tenant.key, stranger), 'mcp-session-id': sessionId },
    });
    expectRefusal(answer, 403, 'MCP_SESSION_FORBIDDEN');
    expect(upstream.log.length).toBe(seen);
    expect(await refusalsOf(stranger)).toMatchObject([
      {
        action: 'auth.refused',
        resourceType: 'agent',
        metadata: {
          actorType: 'agent',
          reasonCode: 'MCP_SESSION_FORBIDDEN',
          subject: stranger,
          route: 'POST /mcp/:serverId',
        },
      },
    ]);
  });

  it('the token endpoint refusing a known client (invalid_client); an unknown client leaves nothing', async () => {
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId,
      name: `client-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: ['mcp://upstream-1'],
      publicKey: generateEd25519KeyMaterial().publicKeyMultibase,
    });
    const { clientId } = await registerClientOf(gateway, { tenantId, agentId });
    await gateway.sync();
    const refused = await postForm(
      `${gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource: 'mcp://upstream-1' },
      { authorization: basic(clientId, 'not-the-secret') },
    );
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
    expect(await issuedCount(gateway, clientId)).toBe(0);
    expect(await refusalsOf(clientId)).toMatchObject([
      {
        action: 'auth.refused',
        resourceType: 'oauth_client',
        metadata: {
          reasonCode: 'OAUTH_INVALID_CLIENT',
          subjectType: 'oauth_client',
          subject: clientId,
          route: 'POST /oauth/token',
          detail: expect.stringContaining('wrong secret'),
        },
      },
    ]);

    const unknown = `agc_${randomUUID().replaceAll('-', '')}`;
    const before = await gateway.db.query('select id from audit_entries');
    const stranger = await postForm(
      `${gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource: 'mcp://upstream-1' },
      { authorization: basic(unknown, 'whatever') },
    );
    expect(stranger.status).toBe(401);
    expect(await gateway.db.query('select id from audit_entries')).toHaveLength(before.length);
  });

  it('/oauth/authorize answering access_denied for a replayed agent proof', async () => {
    const key = generateEd25519KeyMaterial();
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId,
      name: `authz-${randomUUID().slice(0, 8)}`,
      allowedTools: ['*'],
      mcpAudiences: ['mcp://upstream-1'],
      publicKey: key.publicKeyMultibase,
    });
    const { clientId } = await registerClientOf(gateway, {
      tenantId,
      agentId,
      grantTypes: ['authorization_code'],
      redirectUris: [REDIRECT_URI],
    });
    const credential = await issueCredential(gateway, { id: agentId as never, tenantId });
    await gateway.sync();
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const jti = randomUUID();
    const authorize = async () => {
      const url = new URL(`${gateway.url}/oauth/authorize`);
      const params = {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'st',
        resource: 'mcp://upstream-1',
        agent_credential: JSON.stringify(credential),
        agent_proof: await agentProof(key, clientId, gateway.url, challenge, jti),
      };
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      const response = await fetch(url, { redirect: 'manual' });
      return { status: response.status, location: new URL(response.headers.get('location')!) };
    };
    const granted = await authorize();
    expect(granted.location.searchParams.has('code')).toBe(true);
    expect(await refusalsOf(clientId)).toEqual([]);

    const replayed = await authorize();
    expect(replayed.status).toBe(302);
    expect(replayed.location.searchParams.get('error')).toBe('access_denied');
    expect(replayed.location.searchParams.has('code')).toBe(false);
    expect(await refusalsOf(clientId)).toMatchObject([
      {
        action: 'auth.refused',
        resourceType: 'oauth_client',
        metadata: {
          reasonCode: 'OAUTH_INVALID_GRANT',
          subject: clientId,
          route: 'GET /oauth/authorize',
          detail: expect.stringMatching(/^access_denied: .*already used/),
        },
      },
    ]);
  });

  it("a killed agent's calls: the first refusal an entry of its own, the rest of the minute counted", async () => {
    const agentId = await gateway.addAgent(tenantId);
    await killAgent(gateway, tenantId, agentId);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await gateway.inspect(inspectBody(agentId)));
    for (const answer of answers) {
      expect({ status: answer.status, reasonCode: answer.body.reasonCode }).toEqual({
        status: 403,
        reasonCode: 'AGENT_REVOKED',
      });
    }
    // Only the first answer names an entry: the rest are counted in the summary.
    expect(answers.map((answer) => typeof answer.body.auditId)).toEqual([
      'string',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
    const denies = await gateway.db.query(
      `select id from audit_entries where action = 'inspect.deny' and "resourceId" = $1`,
      [agentId],
    );
    expect(denies).toEqual([]);
    const [first] = await refusalsOf(agentId);
    expect(first).toMatchObject({
      id: answers[0]!.body.auditId,
      action: 'auth.refused',
      resourceType: 'agent',
      metadata: {
        reasonCode: 'AGENT_REVOKED',
        subject: agentId,
        route: 'POST /api/v1/mcp/gateway/inspect',
      },
    });
    await endWindows();
    expect((await refusalsOf(agentId))[1]).toMatchObject({
      action: 'auth.refused_summary',
      metadata: { reasonCode: 'AGENT_REVOKED', count: 4, firstEntryId: first!.id },
    });
  });

  it("a killed agent's proxy initialize is refused AGENT_REVOKED through the same path", async () => {
    const { proxyUrl, upstream } = fixture;
    const agentId = await gateway.addAgent(tenantId);
    await killAgent(gateway, tenantId, agentId);
    const seen = upstream.log.length;
    const answer = await mcpFetch(proxyUrl, {
      body: initializeMessage(3),
      headers: apiKeyHeaders(gateway.tenant.key, agentId),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 3,
      error: { code: -32001, data: { reasonCode: 'AGENT_REVOKED' } },
    });
    expect(upstream.log.length).toBe(seen);
    expect(await refusalsOf(agentId)).toMatchObject([
      {
        id: answer.body.error.data.auditId,
        action: 'auth.refused',
        metadata: { reasonCode: 'AGENT_REVOKED', subject: agentId, route: 'POST /mcp/:serverId' },
      },
    ]);
  });

  it('the chain with every refusal entry still verifies', async () => {
    await endWindows();
    const entries = await exportAll(gateway.db, tenantId);
    expect(entries.some((entry) => entry.action === 'auth.refused_summary')).toBe(true);
    expect(await verifyAuditChain(entries)).toMatchObject({ ok: true, count: entries.length });
  });
});

/** An agent-authz+jwt proof for /oauth/authorize (docs/oauth.md). */
async function agentProof(
  key: Ed25519KeyMaterial,
  clientId: string,
  issuer: string,
  codeChallenge: string,
  jti: string,
): Promise<string> {
  const x = Buffer.from(decodeEd25519PublicKey(key.publicKeyMultibase)!).toString('base64url');
  const privateKey = await importJWK(
    { kty: 'OKP', crv: 'Ed25519', x, d: Buffer.from(key.secretKey).toString('base64url') },
    'EdDSA',
  );
  const payload = {
    iss: clientId,
    aud: issuer,
    iat: Math.floor(Date.now() / 1000),
    jti,
    code_challenge: codeChallenge,
  };
  return new CompactSign(Buffer.from(JSON.stringify(payload)))
    .setProtectedHeader({
      alg: 'EdDSA',
      typ: 'agent-authz+jwt',
      kid: agentVerificationMethodId(key.publicKeyMultibase),
    })
    .sign(privateKey);
}
