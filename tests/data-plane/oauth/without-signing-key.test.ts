// A process serving the data plane without a token signing key (a composition that passed none):
// it cannot mint, so it fails closed — the token endpoint answers 503 temporarily_unavailable and
// a forward under oauthMode mcp_as 503 MCP_OAUTH_UNAVAILABLE — while it still serves the JWKS of
// the keys its snapshot names.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../../http-edge/health.js';
import { buildGatewayRuntime, type GatewayRuntime } from '../../../runtime/gateway-runtime.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { addClient, basic, postForm } from './oauth-fixture.js';

describe('a data plane without a token signing key', () => {
  let gateway: TestGateway;
  let keyless: GatewayRuntime;
  let url: string;
  beforeAll(async () => {
    gateway = await startTestGateway('pglite');
    keyless = await buildGatewayRuntime({
      db: gateway.db,
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
      snapshotPollIntervalMs: 60_000,
      defaultMetrics: false,
    });
    await keyless.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(keyless.app.server.address() as { port: number }).port}`;
    keyless.publicUrl.learn(url);
  });
  afterAll(async () => {
    await keyless?.app.close();
    await keyless?.stop();
    await gateway?.close();
  });

  it('fails closed: 503 at the token endpoint, MCP_OAUTH_UNAVAILABLE for mcp_as forwards', async () => {
    const client = await addClient(gateway);
    await gateway.setPolicy(client.tenant.id, { trustedServers: ['files'], oauthMode: 'mcp_as' });
    await keyless.publisher.publishNow();
    expect(keyless.tokenSigner).toBeUndefined();

    const answer = await postForm(
      `${url}/oauth/token`,
      { grant_type: 'client_credentials', resource: 'mcp://files' },
      { authorization: basic(client.clientId, client.secret!) },
    );
    expect({ status: answer.status, error: answer.body.error }).toEqual({
      status: 503,
      error: 'temporarily_unavailable',
    });

    const response = await fetch(`${url}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${client.tenant.key}` },
      body: JSON.stringify(inspectBody(client.agentId, { mode: 'production' })),
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      decision: 'allow',
      reasonCode: 'MCP_OAUTH_UNAVAILABLE',
    });

    const jwks = (await (await fetch(`${url}/oauth/jwks`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual([gateway.runtime.tokenSigner!.kid]);
  });
});
