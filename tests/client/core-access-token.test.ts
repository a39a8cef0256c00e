// The core client's access tokens: the agent's own OAuth client (spawned with its audiences), the
// client secret from configuration only, client_credentials with one resource at the real token
// endpoint, a cache per resource, and every refusal typed: no secret, a resource the agent has no
// client for, a wrong secret, a killed agent.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentRevoked,
  createGatewayClient,
  type GatewayClientConfig,
  GatewayConfigError,
  GatewayRequestError,
} from '../../client/src/index.js';
import {
  type ClientTestGateway,
  clientConfigFor,
  type SpawnedAgent,
  startClientGateway,
} from './core-support.js';

describe('accessToken(resource)', () => {
  let t: ClientTestGateway;
  let agent: SpawnedAgent;

  const configFor = (who: SpawnedAgent, extra: Partial<GatewayClientConfig> = {}) =>
    clientConfigFor(t, who, { clientSecret: who.clientSecret, ...extra });

  beforeAll(async () => {
    t = await startClientGateway();
    agent = await t.spawnAgent({ mcp_audiences: ['mcp://files'] });
  });
  afterAll(async () => t?.close());

  it('obtains a token for exactly the resource, and reuses it while it is fresh', async () => {
    const client = createGatewayClient(configFor(agent));
    const token = await client.accessToken('mcp://files');
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ aud: 'mcp://files', sub: agent.id, client_id: agent.clientId });
    expect(await client.accessToken('mcp://files')).toBe(token);
  });

  it('refuses a resource none of the agent’s clients may obtain', async () => {
    const client = createGatewayClient(configFor(agent));
    const error = await client.accessToken('mcp://mail').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayRequestError);
    expect((error as Error).message).toContain('no OAuth client for mcp://mail');
  });

  it('needs clientSecret in the configuration', async () => {
    const client = createGatewayClient(configFor(agent, { clientSecret: undefined }));
    const error = await client.accessToken('mcp://files').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect((error as GatewayConfigError).field).toBe('clientSecret');
    expect(() => createGatewayClient(configFor(agent, { clientSecret: ' ' }))).toThrow(
      GatewayConfigError,
    );
  });

  it('says what the token endpoint said about a wrong secret', async () => {
    const client = createGatewayClient(configFor(agent, { clientSecret: 'not-the-secret' }));
    const error = await client.accessToken('mcp://files').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayRequestError);
    expect(error).toMatchObject({ status: 401, reasonCode: 'invalid_client' });
  });

  it('throws AgentRevoked for a killed agent, then without a request', async () => {
    const victim = await t.spawnAgent({ mcp_audiences: ['mcp://files'] });
    const client = createGatewayClient(configFor(victim));
    await client.accessToken('mcp://files');
    await t.kill(victim.publicKey);
    const fresh = createGatewayClient(configFor(victim));
    await expect(fresh.accessToken('mcp://files')).rejects.toBeInstanceOf(AgentRevoked);
    expect(fresh.revoked).toBe(true);
  });
});
