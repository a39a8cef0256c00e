// Spawning a governed agent through POST /api/v1/agents/spawn, over real HTTP on PGlite and
// PostgreSQL: the answer is exactly the spec's, its secrets appear once and are stored nowhere
// in clear; the credential verifies with Digital Bazaar's verifier; the OAuth client gets tokens
// from an off-the-shelf client (oauth4webapi) for exactly its audiences; inspect accepts the
// agent's calls with its credential and a proof by the returned key; the agent, its credential
// and client are in the in-process data plane's snapshot before the answer; audited once, and
// AGENT_CHANGED published.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyMaterialFromSeed } from '../../../shared/agentiam/ed25519-keys.js';
import { EVENT_TYPES, type GatewayEvent } from '../../../shared/events/index.js';
import { decodeEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import { expectDeny } from '../../data-plane/inspect/support.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { verifyAsStandardVerifier, verifyAsThirdParty } from '../../support/agentiam.js';
import { inspectWithIdentity } from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import type { Loose } from '../graphql/support.js';
import {
  occurrences,
  type SpawnAnswer,
  type SpawnTestGateway,
  spawnBody,
  startSpawnGateway,
} from './support.js';

describeEachDatabase('spawning a governed agent', (kind) => {
  let gateway: SpawnTestGateway;
  let upstream: McpUpstream;
  let tenantId: string;
  let answer: SpawnAnswer;
  let events: GatewayEvent[];
  const insecure = { [oauth.allowInsecureRequests]: true } as const;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: false });
    gateway = await startSpawnGateway(kind, {
      servers: { files: upstream.url, mail: 'http://127.0.0.1:9/', other: 'http://127.0.0.1:9/' },
    });
    tenantId = gateway.tenant.id;
    await gateway.setPolicy(tenantId, { trustedServers: ['files'], requireAgentIdentity: true });
    events = [];
    const subscription = gateway.runtime.events.subscribe(
      (event) => event.type === EVENT_TYPES.AGENT_CHANGED,
    );
    const spawned = gateway.spawn(
      spawnBody({
        name: 'research',
        role: 'researcher',
        ttl_seconds: 3600,
        supervising_user_id: 'alice@example.com',
      }),
    );
    const next = await subscription.next();
    events.push(next.value as GatewayEvent);
    await subscription.return?.();
    answer = await spawned;
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('answers 201 with exactly the agent, its private JWK, credential and OAuth client, not cached', () => {
    expect(answer.status).toBe(201);
    expect(answer.cacheControl).toBe('no-store');
    const { body } = answer;
    expect(Object.keys(body).sort()).toEqual(
      ['agent', 'credential', 'credentialId', 'expiresAt', 'oauth', 'private_key_jwk'].sort(),
    );
    expect(body.agent).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      did: `did:key:${body.agent.publicKey}`,
      publicKey: expect.stringMatching(/^z6Mk/),
      name: 'research',
      role: 'researcher',
      allowedTools: ['echo', 'search'],
      mcpAudiences: ['mcp://files', 'mcp://mail'],
      persona: { tone: 'terse', language: 'en' },
      systemPrompt: 'You research and summarize.',
      parentAgentId: null,
      status: 'active',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(body.private_key_jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      d: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(body.oauth).toEqual({
      client_id: expect.stringMatching(/^agc_[A-Za-z0-9_-]{22}$/),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_endpoint: `${gateway.url}/oauth/token`,
    });
    expect(body.credentialId).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(body.credential).toMatchObject({
      id: body.credentialId,
      type: ['VerifiableCredential', 'AgentIdentityCredential'],
      issuer: `did:svc:${tenantId}`,
      expirationDate: body.expiresAt,
      credentialSubject: {
        id: body.agent.did,
        tenantId,
        agentId: body.agent.id,
        permittedTools: ['echo', 'search'],
        nonTransferable: true,
        supervisingUserId: 'alice@example.com',
      },
    });
    const seconds = (iso: string) => Date.parse(iso) / 1000;
    expect(seconds(body.expiresAt) - seconds(body.credential.issuanceDate)).toBe(3600);
  });

  it('returns a private JWK (RFC 8037) whose public half is the agent key', () => {
    const jwk = answer.body.private_key_jwk;
    const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
    const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
    expect(publicJwk.x).toBe(jwk.x);
    const publicKey = decodeEd25519PublicKey(answer.body.agent.publicKey);
    expect(Buffer.from(publicKey ?? []).toString('base64url')).toBe(jwk.x);
  });

  it('shows each secret once and stores none in clear', async () => {
    const { private_key_jwk: jwk, oauth: client } = answer.body;
    expect(occurrences(answer.text, jwk.d)).toBe(1);
    expect(occurrences(answer.text, client.client_secret)).toBe(1);
    const stored = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
      where: { id: client.client_id },
    });
    expect(stored.secretHash).toBe(
      createHash('sha256').update(client.client_secret, 'utf8').digest('hex'),
    );
    const seed = Buffer.from(jwk.d, 'base64url');
    const secrets = [client.client_secret, jwk.d, seed.toString('hex'), seed.toString('base64')];
    for (const table of [
      'agents',
      'identity_credentials',
      'oauth_clients',
      'spawn_idempotency_keys',
      'audit_entries',
      'tenant_signing_keys',
      'status_lists',
    ]) {
      const rows = JSON.stringify(await gateway.db.query(`select * from ${table}`));
      for (const secret of secrets) expect(rows, table).not.toContain(secret);
    }
  });

  it('stores the agent, its credential and its OAuth client as answered', async () => {
    const { body } = answer;
    const agent = await gateway.db.prisma.agent.findUniqueOrThrow({ where: { id: body.agent.id } });
    expect(agent).toMatchObject({
      tenantId,
      name: 'research',
      role: 'researcher',
      systemPrompt: 'You research and summarize.',
      personaTone: 'terse',
      personaLanguage: 'en',
      allowedTools: ['echo', 'search'],
      mcpAudiences: ['mcp://files', 'mcp://mail'],
      publicKey: body.agent.publicKey,
      did: body.agent.did,
      parentAgentId: null,
      supervisingUserId: 'alice@example.com',
      status: 'active',
    });
    expect(agent.createdAt.toISOString()).toBe(body.agent.createdAt);
    const credential = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: body.credentialId },
    });
    expect(credential).toMatchObject({
      agentId: body.agent.id,
      permittedTools: ['echo', 'search'],
      supervisingUserId: 'alice@example.com',
      revokedAt: null,
    });
    expect(credential.document).toEqual(body.credential);
    const client = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
      where: { id: body.oauth.client_id },
    });
    expect(client).toMatchObject({
      tenantId,
      agentId: body.agent.id,
      authMethod: 'client_secret_basic',
      grantTypes: ['client_credentials'],
      redirectUris: [],
      audiences: ['mcp://files', 'mcp://mail'],
      revokedAt: null,
    });
    // In the in-process data plane's snapshot before the answer.
    const served = gateway.runtime.store.current?.tenants.get(tenantId);
    expect(served?.agents.get(body.agent.id)?.publicKey).toBe(body.agent.publicKey);
    expect(
      served?.source.oauthClients?.some((entry: Loose) => entry.id === body.oauth.client_id),
    ).toBe(true);
  });

  it('audits agent.spawned once, without a secret, and publishes AGENT_CHANGED', async () => {
    const entries = await gateway.db.prisma.auditEntry.findMany({
      where: { tenantId, action: 'agent.spawned' },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resourceType: 'agent', resourceId: answer.body.agent.id });
    expect(entries[0]?.metadata).toMatchObject({
      actorType: 'operator',
      actor: expect.stringMatching(/^api_key:/),
      name: 'research',
      publicKey: answer.body.agent.publicKey,
      keyGenerated: true,
      credentialId: answer.body.credentialId,
      oauthClientId: answer.body.oauth.client_id,
      mcpAudiences: ['mcp://files', 'mcp://mail'],
    });
    expect(events).toEqual([
      {
        type: 'agent.changed',
        tenantId,
        agent: { id: answer.body.agent.id, change: 'spawned' },
      },
    ]);
  });

  it('issues a credential that Digital Bazaar’s verifier accepts, from the database and over HTTP', async () => {
    const fromDatabase = await verifyAsStandardVerifier(
      gateway.db,
      tenantId,
      answer.body.credential,
    );
    expect(fromDatabase.result.error).toBeUndefined();
    expect(fromDatabase.result.verified).toBe(true);
    expect(fromDatabase.revoked).toBe(false);
    const served = await verifyAsThirdParty(gateway.url, answer.body.credential);
    expect(served.result.verified).toBe(true);
    expect(served.revoked).toBe(false);
  });

  it('gives an OAuth client that obtains tokens for exactly its audiences (oauth4webapi)', async () => {
    const issuer = new URL(gateway.url);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    expect(as.token_endpoint).toBe(answer.body.oauth.token_endpoint);
    const client = { client_id: answer.body.oauth.client_id };
    const auth = oauth.ClientSecretBasic(answer.body.oauth.client_secret);
    const request = (resource: string) =>
      oauth.clientCredentialsGrantRequest(as, client, auth, { resource }, insecure);
    for (const resource of ['mcp://files', 'mcp://mail']) {
      const tokens = await oauth.processClientCredentialsResponse(
        as,
        client,
        await request(resource),
      );
      expect(tokens.token_type).toBe('bearer');
      const claims = JSON.parse(
        Buffer.from(tokens.access_token.split('.')[1] as string, 'base64url').toString(),
      );
      expect(claims).toMatchObject({ sub: answer.body.agent.id, aud: resource });
    }
    const refused = await oauth
      .processClientCredentialsResponse(as, client, await request('mcp://other'))
      .then(
        () => expect.unreachable('a token for another audience'),
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect(refused).toMatchObject({ status: 400, error: 'invalid_target' });
  });

  it('is accepted by inspect with its credential and a proof by the returned key', async () => {
    const seed = Buffer.from(answer.body.private_key_jwk.d, 'base64url');
    const key = keyMaterialFromSeed(seed);
    const call = (tool: string) =>
      inspectBody(answer.body.agent.id, { tool, mode: 'production', args: { text: 'hi' } });
    const allowed = await inspectWithIdentity(gateway, call('echo'), {
      credential: answer.body.credential,
      key,
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ decision: 'allow', reasonCode: null });
    expect(upstream.calls.get('echo')).toBe(1);
    const refused = await inspectWithIdentity(gateway, call('fail'), {
      credential: answer.body.credential,
      key,
    });
    await expectDeny(gateway, refused, {
      status: 403,
      reasonCode: 'DELEGATION_TOOL_NOT_PERMITTED',
      tenantId,
    });
  });

  it('keeps the caller’s own public key: no private key in the answer', async () => {
    const publicKey = newAgentPublicKey();
    const own = await gateway.spawn(spawnBody({ public_key: publicKey }));
    expect(own.status).toBe(201);
    expect(own.body.private_key_jwk).toBeUndefined();
    expect(own.body.agent).toMatchObject({ publicKey, did: `did:key:${publicKey}` });
    expect(own.body.credential.credentialSubject.id).toBe(`did:key:${publicKey}`);
    // No supervising user given: the credential names none.
    expect(own.body.credential.credentialSubject).not.toHaveProperty('supervisingUserId');
    expect(
      (await verifyAsStandardVerifier(gateway.db, tenantId, own.body.credential)).result.verified,
    ).toBe(true);
    expect(own.body.oauth.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('spawns a sub-agent with a subset of its parent’s tools, globs included', async () => {
    const parent = await gateway.spawn(spawnBody({ allowed_tools: ['echo', 'read_*'] }));
    expect(parent.status).toBe(201);
    const child = await gateway.spawn(
      spawnBody({
        allowed_tools: ['echo', 'read_file', 'read_dir_*'],
        mcp_audiences: ['mcp://files'],
        parent_agent_id: parent.body.agent.id,
      }),
    );
    expect(child.status).toBe(201);
    expect(child.body.agent.parentAgentId).toBe(parent.body.agent.id);
    const stored = await gateway.db.prisma.agent.findUniqueOrThrow({
      where: { id: child.body.agent.id },
    });
    expect(stored.parentAgentId).toBe(parent.body.agent.id);
  });
});
