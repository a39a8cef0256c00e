// GET /api/v1/agents/{agentId}/identity: an agent's public identity material for the client
// library. Scope agents:execute, tenant-scoped (another tenant's agent looks absent), public
// material only (never a secret, its hash, a private key or the system prompt), never cached.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/errors/index.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';
import { type SpawnTestGateway, spawnBody, startSpawnGateway } from './spawn/support.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
type Loose = any;

describe('GET /api/v1/agents/{agentId}/identity', () => {
  let gateway: SpawnTestGateway;
  let spawned: Loose;
  let killKey: string;

  const read = async (agentId: string, key: string | null = gateway.tenant.key) => {
    const response = await fetch(
      `${gateway.url}/api/v1/agents/${encodeURIComponent(agentId)}/identity`,
      { headers: key === null ? {} : { authorization: `Bearer ${key}` } },
    );
    const text = await response.text();
    return {
      status: response.status,
      cacheControl: response.headers.get('cache-control'),
      text,
      body: JSON.parse(text) as Loose,
    };
  };

  beforeAll(async () => {
    gateway = await startSpawnGateway(quickDatabaseKind);
    const answer = await gateway.spawn(spawnBody({ name: 'identity-reader', ttl_seconds: 3600 }));
    expect(answer.status).toBe(201);
    spawned = answer.body;
    killKey = await gateway.addApiKey(gateway.tenant.id, ['agents:kill']);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("answers a spawned agent's credential, key, OAuth client and status, never cached", async () => {
    const answer = await read(spawned.agent.id);
    expect(answer.status).toBe(200);
    expect(answer.cacheControl).toBe('no-store');
    expect(answer.body).toEqual({
      agentId: spawned.agent.id,
      did: spawned.agent.did,
      publicKey: spawned.agent.publicKey,
      status: 'active',
      allowedTools: ['echo', 'search'],
      mcpAudiences: ['mcp://files', 'mcp://mail'],
      credential: spawned.credential,
      credentialId: spawned.credentialId,
      credentialExpiresAt: spawned.expiresAt,
      oauthClients: [
        {
          clientId: spawned.oauth.client_id,
          tokenEndpointAuthMethod: 'client_secret_basic',
          audiences: ['mcp://files', 'mcp://mail'],
        },
      ],
      killedAt: null,
    });
    // Public material only.
    expect(answer.text).not.toContain(spawned.oauth.client_secret);
    expect(answer.text).not.toContain(spawned.private_key_jwk.d);
    expect(answer.text).not.toContain('You research and summarize.');
  });

  it('a killed agent shows status killed and no live credential or OAuth client', async () => {
    const victim = (await gateway.spawn(spawnBody({ name: 'doomed' }))).body;
    const kill = await fetch(
      `${gateway.url}/api/v2/infrastructure/agents/${victim.agent.publicKey}/kill`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${killKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'identity test' }),
      },
    );
    expect(kill.status).toBe(200);
    const answer = await read(victim.agent.id);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      agentId: victim.agent.id,
      status: 'killed',
      credential: null,
      credentialId: null,
      credentialExpiresAt: null,
      oauthClients: [],
      killedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('an agent without a credential answers credential null', async () => {
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const answer = await read(agentId);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      agentId,
      status: 'active',
      credential: null,
      oauthClients: [],
    });
  });

  it('refuses without an API key: 401 AUTH_INVALID_API_KEY', async () => {
    const answer = await read(spawned.agent.id, null);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ reasonCode: 'AUTH_INVALID_API_KEY' });
  });

  it('refuses a key without agents:execute: 403 AUTH_INSUFFICIENT_SCOPE', async () => {
    const answer = await read(spawned.agent.id, gateway.managerKey);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({
      reasonCode: 'AUTH_INSUFFICIENT_SCOPE',
      requiredScope: 'agents:execute',
    });
  });

  it("another tenant's agent looks absent: 404 NOT_FOUND", async () => {
    const other = await gateway.addTenant();
    const answer = await read(spawned.agent.id, other.key);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ reasonCode: 'NOT_FOUND' });
    expect(answer.text).not.toContain(spawned.agent.publicKey);
    // And its own agent is readable with its own key.
    expect((await read(other.agentId, other.key)).status).toBe(200);
  });

  it('an unknown id: 404 NOT_FOUND with the agent hint', async () => {
    const answer = await read('00000000-0000-4000-8000-000000000000');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      error: 'NOT_FOUND',
      reasonCode: 'NOT_FOUND',
      message: 'no agent 00000000-0000-4000-8000-000000000000 in this tenant',
      hint: ERROR_CODES.NOT_FOUND.hints.agent,
      docs: 'client/README.md',
    });
  });

  it('an id longer than 256 characters: 400 REQUEST_INVALID', async () => {
    const answer = await read('a'.repeat(257));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ reasonCode: 'REQUEST_INVALID' });
  });
});
