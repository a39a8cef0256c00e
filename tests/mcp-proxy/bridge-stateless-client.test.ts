// Bridging eras (issue 28, §3): a stateless client (MCP 2026-07-28) in front of an upstream that
// speaks only the session era (an SDK 1.x server that refuses a request without a session) is
// served over one upstream session the gateway holds for the agent (session-bridge.ts):
// - tools/list, server/discover and tools/call answer as this era answers (resultType, the
//   gateway's private list, discover from the session's initialize), progress included, and every
//   request after the first rides the same upstream session (one initialize);
// - a request the upstream sends during a call (an elicitation) becomes the call's
//   InputRequiredResult; the retry's answer reaches the upstream, which completes the call; the
//   same retry again finds no call in flight;
// - the official SDK v2 client, negotiating, stays in its own era against such a server;
// - a bridge with no request in flight is closed once idle (its upstream session DELETEd), and
//   the next request opens another; a kill of the agent closes its bridge at once.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { SessionBridges } from '../../data-plane/mcp-proxy/session-bridge.js';
import { UpstreamSessions } from '../../data-plane/mcp-proxy/upstream/index.js';
import { generateEd25519KeyMaterial } from '../../shared/agentiam/ed25519-keys.js';
import { describeEachDatabase } from '../support/databases.js';
import { postAsClient, startTestGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import {
  apiKeyHeaders,
  mcpFetch,
  type RelayUpstream,
  startRelayUpstream,
  statelessHeaders,
  statelessRequest,
} from './transport-support.js';

const VERSION = '2026-07-28';
const ELICITED = { action: 'accept', content: { name: 'Ada', size: 'm', confirm: true } };

const request = statelessRequest;

describeEachDatabase('a stateless client in front of a session-era upstream', (kind) => {
  let gateway: TestGateway;
  let upstream: RelayUpstream;
  let agentId: string;
  let url: string;

  beforeAll(async () => {
    upstream = await startRelayUpstream();
    gateway = await startTestGateway(kind);
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'legacy', url: upstream.url });
    await gateway.setPolicy(tenantId, { trustedServers: ['legacy'] });
    agentId = await gateway.addAgent(tenantId, { allowedTools: ['progress', 'elicit'] });
    url = `${gateway.url}/mcp/legacy`;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const send = (body: ReturnType<typeof request>) =>
    mcpFetch(url, {
      body,
      headers: { ...apiKeyHeaders(gateway.tenant.key, agentId), ...statelessHeaders(body) },
    });

  it('answers as its era over one upstream session: lists, discover, a call with progress', async () => {
    const listed = await send(request('tools/list', {}, 'l1'));
    expect(listed.status).toBe(200);
    expect(listed.body.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'private',
      ttlMs: 60_000,
    });
    expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'elicit',
      'progress',
    ]);

    const discovered = await send(request('server/discover', {}, 'd1'));
    expect(discovered.body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [VERSION],
      capabilities: { tools: { listChanged: true } },
      cacheScope: 'private',
      _meta: {
        'io.modelcontextprotocol/serverInfo': { name: 'agent-gateway' },
        'dev.agent-gateway/upstreamServerInfo': { name: 'relay-upstream', version: '1.0.0' },
      },
    });
    expect(discovered.body.result._meta['dev.agent-gateway/tools'].sort()).toEqual([
      'elicit',
      'progress',
    ]);

    const called = await send(
      request(
        'tools/call',
        { name: 'progress', arguments: { steps: 2 }, _meta: { progressToken: 'p' } },
        'c1',
      ),
    );
    expect(called.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(
      called.messages.filter((m) => (m as { method?: string }).method === 'notifications/progress'),
    ).toHaveLength(2);
    expect(called.body).toEqual({
      jsonrpc: '2.0',
      id: 'c1',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'done after 2' }] },
    });

    // One upstream session for all of it: one initialize, then requests on its session id.
    const initializes = upstream.log.filter((entry) => entry.rpcMethod === 'initialize');
    expect(initializes).toHaveLength(1);
    const onSession = upstream.log.filter(
      (entry) => entry.rpcMethod === 'tools/call' || entry.rpcMethod === 'tools/list',
    );
    expect(new Set(onSession.map((entry) => entry.sessionId)).size).toBe(1);
    expect(onSession.every((entry) => entry.sessionId !== undefined)).toBe(true);
  });

  it('turns an upstream’s elicitation during a call into the call’s InputRequiredResult', async () => {
    const capabilities = { elicitation: { form: {} } };
    const first = await send(
      request('tools/call', { name: 'elicit', arguments: {} }, 'e1', capabilities),
    );
    expect(first.status, JSON.stringify(first.messages)).toBe(200);
    const asked = first.body.result;
    expect(asked, JSON.stringify(first.messages)).toBeDefined();
    expect(asked).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^ags1\./),
    });
    const entries = Object.entries(
      asked.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>,
    );
    expect(entries).toHaveLength(1);
    const [key, question] = entries[0]!;
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Who are you?' },
    });
    expect(upstream.calls.get('elicit')).toBe(1);

    const retry = (id: string) =>
      send(
        request(
          'tools/call',
          {
            name: 'elicit',
            arguments: {},
            requestState: asked.requestState,
            inputResponses: { [key]: ELICITED },
          },
          id,
          capabilities,
        ),
      );
    const answered = await retry('e2');
    expect(answered.body).toEqual({
      jsonrpc: '2.0',
      id: 'e2',
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: JSON.stringify(ELICITED) }],
      },
    });
    expect(upstream.answers.at(-1)).toEqual(ELICITED);
    expect(upstream.calls.get('elicit')).toBe(1);

    // The call is over: the same retry finds nothing in flight.
    const again = await retry('e3');
    expect(again.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('no longer in flight'),
    });
    expect(upstream.calls.get('elicit')).toBe(1);
  });

  it('closes the agent’s bridge when the agent is killed', async () => {
    const key = generateEd25519KeyMaterial();
    const { id: doomed } = await createAgent(gateway.db, {
      tenantId: gateway.tenant.id,
      name: `bridge-kill-${kind}`,
      allowedTools: ['progress'],
      publicKey: key.publicKeyMultibase,
    });
    await gateway.sync();
    const body = request('tools/call', { name: 'progress', arguments: { steps: 0 } }, 'k1');
    const called = await mcpFetch(url, {
      body,
      headers: { ...apiKeyHeaders(gateway.tenant.key, doomed), ...statelessHeaders(body) },
    });
    expect(called.body.result).toMatchObject({ resultType: 'complete' });
    const sessionOf = upstream.log
      .filter((entry) => entry.rpcMethod === 'tools/call')
      .at(-1)!.sessionId;
    const killKey = await gateway.addApiKey(gateway.tenant.id, ['agents:kill']);
    const killed = await postAsClient(
      `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(key.publicKeyMultibase)}/kill`,
      { reason: 'bridge kill test' },
      { key: killKey },
    );
    expect(killed.status).toBe(200);
    await until(
      async () =>
        upstream.log.filter(
          (entry) => entry.httpMethod === 'DELETE' && entry.sessionId === sessionOf,
        ).length,
      (deletes) => deletes === 1,
      'the killed agent’s bridge deletes its upstream session',
    );
  });

  it('serves the official SDK v2 client, negotiating, in its own era', async () => {
    const client = new Client(
      { name: 'sdk-v2-bridge', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: apiKeyHeaders(gateway.tenant.key, agentId) },
      }),
    );
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['elicit', 'progress']);
      const result = await client.callTool({ name: 'progress', arguments: { steps: 1 } });
      expect(result.content).toEqual([{ type: 'text', text: 'done after 1' }]);
    } finally {
      await client.close();
    }
  });
});

describe('a bridge left idle', () => {
  it('is closed after its idle time, and the next request opens another session', async () => {
    const upstream = await startRelayUpstream();
    const sessions = new UpstreamSessions();
    const bridges = new SessionBridges(sessions, 50);
    const owner = { tenantId: 't', agentId: 'a', serverKey: 'relay' };
    const config = {
      target: { serverKey: 'relay', url: upstream.url },
      connectTimeoutMs: 2_000,
      readTimeoutMs: 10_000,
      maxMessageBytes: 1 << 20,
    };
    const list = () =>
      bridges
        .upstream(owner, config, { clientInfo: undefined, clientCapabilities: {} })
        .request({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    try {
      expect(await list()).toMatchObject({ id: 1, result: { resultType: 'complete' } });
      expect(await list()).toMatchObject({ id: 1, result: { resultType: 'complete' } });
      const opened = upstream.log.filter((entry) => entry.rpcMethod === 'initialize').length;
      expect(opened).toBe(1);
      await until(
        async () => upstream.log.filter((entry) => entry.httpMethod === 'DELETE').length,
        (deletes) => deletes === 1,
        'the idle bridge deletes its upstream session',
      );
      expect(bridges.size).toBe(0);
      await list();
      expect(upstream.log.filter((entry) => entry.rpcMethod === 'initialize')).toHaveLength(2);
    } finally {
      await bridges.close();
      await sessions.close();
      await upstream.close();
    }
  });
});
