// Who may call the MCP proxy (issue 14 item 2, DESIGN.md §6): a gateway access token whose
// audience is the proxy resource `<gateway>/mcp/{serverId}` (never `mcp://{serverId}`, which is
// what upstreams receive), or an agents:execute API key naming its agent in X-Agent-Id. Every
// failure is 401 with `WWW-Authenticate: Bearer … resource_metadata=…` (RFC 9728) and forwards
// nothing; the metadata names our authorization server, and the official SDK's OAuth client
// (ClientCredentialsProvider, a client made by spawn) starts from the 401, discovers it, obtains a
// token by itself and lists tools. Tokens come from our own token endpoint over HTTP.
import { randomBytes } from 'node:crypto';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnBody } from '../control-plane/spawn/support.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { basic, postForm } from '../data-plane/oauth/oauth-fixture.js';
import { describeEachDatabase } from '../support/databases.js';
import { postAsClient } from '../support/gateway.js';
import type { McpUpstream } from '../support/mcp-upstream.js';
import { type ProxyFixture, startProxyFixture } from './support.js';
import {
  apiKeyHeaders,
  expectRefusal,
  initializeMessage,
  mcpFetch,
  openRawSession,
  type RawAnswer,
  toolsList,
} from './transport-support.js';

interface Spawned {
  readonly id: string;
  readonly publicKey: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

function seen(upstream: McpUpstream) {
  return { requests: upstream.log.length, calls: Object.fromEntries(upstream.calls) };
}

describeEachDatabase('MCP proxy authentication', (kind) => {
  let fixture: ProxyFixture;
  let managerKey: string;
  let killKey: string;
  let resource: string;
  let metadataUrl: string;

  /** An agent made by POST /api/v1/agents/spawn, allowed `echo`, audience mcp://<serverId>. */
  const spawn = async (): Promise<Spawned> => {
    const { gateway, serverId } = fixture;
    const response = await postAsClient(
      `${gateway.url}/api/v1/agents/spawn`,
      spawnBody({ allowed_tools: ['echo'], mcp_audiences: [`mcp://${serverId}`] }),
      { key: managerKey },
    );
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).toBe(201);
    const agent = body.agent as { id: string; publicKey: string };
    const oauth = body.oauth as { client_id: string; client_secret: string };
    return {
      id: agent.id,
      publicKey: agent.publicKey,
      clientId: oauth.client_id,
      clientSecret: oauth.client_secret,
    };
  };

  /** client_credentials at our token endpoint for `target`. */
  const tokenFor = async (agent: Spawned, target: string): Promise<string> => {
    const answer = await postForm(
      `${fixture.gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource: target },
      { authorization: basic(agent.clientId, agent.clientSecret) },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.access_token as string;
  };

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** A 401 of the proxy: the RFC 9728 challenge and the JSON-RPC error body. */
  /** A 401 of the proxy; `error` is the challenge's RFC 6750 §3.1 code, null for none. */
  const expectChallenge = (
    answer: RawAnswer,
    reasonCode = 'MCP_PROXY_UNAUTHORIZED',
    error: 'invalid_token' | 'invalid_request' | null = 'invalid_token',
  ) => {
    expectRefusal(answer, 401, reasonCode);
    expect(answer.headers.get('www-authenticate')).toBe(
      error === null
        ? `Bearer resource_metadata="${metadataUrl}"`
        : `Bearer error="${error}", resource_metadata="${metadataUrl}"`,
    );
  };

  beforeAll(async () => {
    fixture = await startProxyFixture(kind);
    const { gateway, serverId } = fixture;
    gateway.runtime.keyCustody.useMasterKey(randomBytes(32), 'the test master key');
    managerKey = await gateway.addApiKey(gateway.tenant.id, ['agents:manage']);
    killKey = await gateway.addApiKey(gateway.tenant.id, ['agents:kill']);
    resource = `${gateway.url}/mcp/${serverId}`;
    metadataUrl = `${gateway.url}/.well-known/oauth-protected-resource/mcp/${serverId}`;
  });
  afterAll(async () => {
    await fixture?.close();
  });

  describe('refusals', () => {
    it('answers no Authorization with 401, the resource metadata link and MCP_PROXY_UNAUTHORIZED, forwarding nothing', async () => {
      const { proxyUrl, upstream } = fixture;
      const before = seen(upstream);
      for (const method of ['POST', 'GET', 'DELETE']) {
        const answer = await mcpFetch(proxyUrl, {
          method,
          ...(method === 'POST' ? { body: initializeMessage() } : {}),
        });
        // RFC 6750 §3.1: a request without authentication gets no error code.
        expectChallenge(answer, 'MCP_PROXY_UNAUTHORIZED', null);
      }
      const presented = [
        ['Basic abc', null],
        ['Bearer', 'invalid_request'],
        ['Bearer a b', 'invalid_request'],
        ['bearer not-a-token', 'invalid_token'],
      ] as const;
      for (const [authorization, error] of presented) {
        const answer = await mcpFetch(proxyUrl, {
          body: initializeMessage(),
          headers: { authorization },
        });
        expectChallenge(answer, 'MCP_PROXY_UNAUTHORIZED', error);
      }
      expect(seen(upstream)).toEqual(before);
    });

    it('serves the RFC 9728 metadata naming this resource and our authorization server', async () => {
      const response = await fetch(metadataUrl);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        resource,
        authorization_servers: [fixture.gateway.url],
        bearer_methods_supported: ['header'],
      });
      // The authorization server it names publishes its RFC 8414 metadata.
      const as = await fetch(`${fixture.gateway.url}/.well-known/oauth-authorization-server`);
      expect(await as.json()).toMatchObject({
        issuer: fixture.gateway.url,
        token_endpoint: `${fixture.gateway.url}/oauth/token`,
        grant_types_supported: expect.arrayContaining(['client_credentials']),
      });
    });

    it('refuses an API key without X-Agent-Id (401), an unknown key (401) and one without agents:execute (403)', async () => {
      const { proxyUrl, upstream, gateway } = fixture;
      const before = seen(upstream);
      const noAgent = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: { authorization: `Bearer ${gateway.tenant.key}` },
      });
      expectChallenge(noAgent, 'MCP_PROXY_UNAUTHORIZED', 'invalid_request');
      expect(noAgent.body.error.message).toContain('X-Agent-Id');
      const badAgent = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: { authorization: `Bearer ${gateway.tenant.key}`, 'x-agent-id': 'a b/c' },
      });
      expectChallenge(badAgent, 'MCP_PROXY_UNAUTHORIZED', 'invalid_request');
      const unknownKey = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: apiKeyHeaders(`${gateway.tenant.key.slice(0, -4)}0000`, gateway.tenant.agentId),
      });
      expectChallenge(unknownKey, 'AUTH_INVALID_API_KEY');
      const readOnly = await gateway.addApiKey(gateway.tenant.id, ['audit:read', 'agents:manage']);
      const noScope = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: apiKeyHeaders(readOnly, gateway.tenant.agentId),
      });
      expectRefusal(noScope, 403, 'AUTH_INSUFFICIENT_SCOPE');
      expect(seen(upstream)).toEqual(before);
    });

    it('refuses a token for mcp://<serverId> (what upstreams receive): 401 naming the audience', async () => {
      const { proxyUrl, upstream, serverId } = fixture;
      const agent = await spawn();
      const upstreamToken = await tokenFor(agent, `mcp://${serverId}`);
      const before = seen(upstream);
      const answer = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: bearer(upstreamToken),
      });
      expectChallenge(answer);
      expect(answer.body.error.message).toContain(`mcp://${serverId}`);
      // Not a token at all, and a token of another server's proxy resource.
      expectChallenge(
        await mcpFetch(proxyUrl, { body: initializeMessage(), headers: bearer('eyJ.not.jwt') }),
      );
      const proxyOfOther = await mcpFetch(`${fixture.gateway.url}/mcp/other`, {
        body: initializeMessage(),
        headers: bearer(await tokenFor(agent, resource)),
      });
      expectRefusal(proxyOfOther, 401, 'MCP_PROXY_UNAUTHORIZED');
      expect(proxyOfOther.headers.get('www-authenticate')).toContain(
        `resource_metadata="${fixture.gateway.url}/.well-known/oauth-protected-resource/mcp/other"`,
      );
      expect(seen(upstream)).toEqual(before);
    });
  });

  describe('access tokens for the proxy resource', () => {
    it('opens a session and lists the agent’s tools with a token for <gateway>/mcp/<serverId>', async () => {
      const { proxyUrl, upstream } = fixture;
      const agent = await spawn();
      const token = await tokenFor(agent, resource);
      const client = new Client({ name: 'token-client', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(proxyUrl), {
          requestInit: { headers: bearer(token) },
        }),
      );
      try {
        const listed = await client.listTools();
        expect(listed.tools.map((tool) => tool.name)).toEqual(['echo']);
        const before = upstream.calls.get('echo') ?? 0;
        const echoed = await client.callTool({ name: 'echo', arguments: { text: 'token' } });
        expect(echoed.structuredContent).toEqual({ text: 'token' });
        expect(upstream.calls.get('echo')).toBe(before + 1);
      } finally {
        await client.close();
      }
    });

    it('refuses a revoked token at once, on a new session and on the session it opened', async () => {
      const { proxyUrl, upstream, gateway } = fixture;
      const agent = await spawn();
      const token = await tokenFor(agent, resource);
      const { headers } = await openRawSession(proxyUrl, bearer(token));
      expect((await mcpFetch(proxyUrl, { body: toolsList(), headers })).status).toBe(200);
      await gateway.runtime.issuedTokens.flush();
      const revoked = await postForm(
        `${gateway.url}/oauth/revoke`,
        { token },
        { authorization: basic(agent.clientId, agent.clientSecret) },
      );
      expect(revoked.status).toBe(200);
      const before = seen(upstream);
      const onSession = await mcpFetch(proxyUrl, { body: toolsList(), headers });
      expectChallenge(onSession);
      expect(onSession.body.error.message).toContain('revoked');
      expectChallenge(
        await mcpFetch(proxyUrl, { body: initializeMessage(), headers: bearer(token) }),
      );
      expect(seen(upstream)).toEqual(before);
    });

    it('refuses a killed agent’s token', async () => {
      const { proxyUrl, upstream, gateway } = fixture;
      const agent = await spawn();
      const token = await tokenFor(agent, resource);
      const { headers } = await openRawSession(proxyUrl, bearer(token));
      await gateway.runtime.issuedTokens.flush();
      const killed = await postAsClient(
        `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(agent.publicKey)}/kill`,
        { reason: 'proxy auth test' },
        { key: killKey },
      );
      expect(killed.status).toBe(200);
      const before = seen(upstream);
      // At once (the kill's own overlay, before any snapshot): the session answers AGENT_REVOKED and a new
      // one is refused with an audited AGENT_REVOKED.
      expectRefusal(await mcpFetch(proxyUrl, { body: toolsList(), headers }), 403, 'AGENT_REVOKED');
      const reopened = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: bearer(token),
      });
      expect(reopened.status).toBe(200);
      expect(reopened.headers.get('mcp-session-id')).toBeNull();
      expect(reopened.body.error).toMatchObject({
        code: -32001,
        data: { reasonCode: 'AGENT_REVOKED' },
      });
      // Audited once as the first refusal of the minute (the session's), the rest counted.
      const refusals = await gateway.db.query<{ id: string }>(
        `select id from audit_entries where action = 'auth.refused' and "resourceId" = $1`,
        [agent.id],
      );
      expect(refusals).toHaveLength(1);
      const audit = await findAuditEntry(gateway.db, refusals[0]!.id);
      expect(audit).toMatchObject({ metadata: { reasonCode: 'AGENT_REVOKED' } });
      // Once the kill's snapshot is served, the token itself is refused (revoked).
      await gateway.sync();
      const afterSync = await mcpFetch(proxyUrl, {
        body: initializeMessage(),
        headers: bearer(token),
      });
      expectChallenge(afterSync);
      expect(afterSync.body.error.message).toContain('revoked');
      expect(seen(upstream)).toEqual(before);
    });
  });

  describe('an OAuth-discovering client', () => {
    it('starts from the 401, discovers our authorization server, obtains a token itself and lists tools', async () => {
      const { proxyUrl, upstream } = fixture;
      const agent = await spawn();
      const provider = new ClientCredentialsProvider({
        clientId: agent.clientId,
        clientSecret: agent.clientSecret,
        expectedIssuer: fixture.gateway.url,
      });
      const client = new Client({ name: 'discovering-client', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(proxyUrl), { authProvider: provider }),
      );
      try {
        const listed = await client.listTools();
        expect(listed.tools.map((tool) => tool.name)).toEqual(['echo']);
        // The token it obtained is one of ours, for this proxy resource.
        const access = provider.tokens()?.access_token as string;
        const claims = JSON.parse(
          Buffer.from(access.split('.')[1] as string, 'base64url').toString(),
        );
        expect(claims).toMatchObject({ aud: resource, sub: agent.id, iss: fixture.gateway.url });
        const before = upstream.calls.get('echo') ?? 0;
        await client.callTool({ name: 'echo', arguments: { text: 'discovered' } });
        expect(upstream.calls.get('echo')).toBe(before + 1);
        // The upstream never saw the client's token.
        expect(upstream.log.some((entry) => entry.authorization?.includes(access))).toBe(false);
      } finally {
        await client.close();
      }
    });
  });
});
