// MCP 2026-07-28 through /mcp/{serverId} (issue 27): stateless requests beside sessions, over
// raw HTTP in front of a small server of that era (tests/support/stateless-upstream.ts). Every
// refusal the revision requires is checked for its status, JSON-RPC code, reasonCode and id, and
// for having forwarded nothing; tools/call is governed and audited (its held calls and rounds:
// held-on-wire.test.ts); tools/list and server/discover
// answer for the calling agent; a listen stream carries the gateway's own list change and ends
// with a kill; a session-era upstream is bridged (bridge-stateless-client.test.ts).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent, updateAgent } from '../../control-plane/services/agents.js';
import { generateEd25519KeyMaterial } from '../../shared/agentiam/ed25519-keys.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { describeEachDatabase } from '../support/databases.js';
import { postAsClient, startTestGateway, type TestGateway } from '../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import {
  type StatelessTestUpstream,
  startStatelessUpstream,
} from '../support/stateless-upstream.js';
import { apiKeyHeaders, initializeMessage, mcpFetch, parseSse } from './transport-support.js';

const VERSION = '2026-07-28';
/** A failure bound for what follows an event (a poll returns as soon as it holds). */
const EVENTUALLY = { timeout: 30_000, interval: 20 };
const LIST_TTL_MS = 4_321;
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function request(
  method: string,
  params: Record<string, unknown> = {},
  id: string | number = 1,
): { jsonrpc: '2.0'; id: string | number; method: string; params: Record<string, unknown> } {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...META } } };
}

/** The headers the revision requires of a request, beside the caller's. */
function eraHeaders(method: string, name?: string): Record<string, string> {
  return {
    'mcp-protocol-version': VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

/** A listen stream read as it comes. */
function openListen(url: string, headers: Record<string, string>, id: string) {
  const controller = new AbortController();
  const messages: Record<string, unknown>[] = [];
  let ended = false;
  const done = (async () => {
    const response = await fetch(url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(
        request('subscriptions/listen', { notifications: { toolsListChanged: true } }, id),
      ),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done: finished } = await reader.read();
      if (finished) break;
      text += decoder.decode(value, { stream: true });
      const cut = text.lastIndexOf('\n\n');
      if (cut < 0) continue;
      messages.push(...(parseSse(text.slice(0, cut + 2)) as Record<string, unknown>[]));
      text = text.slice(cut + 2);
    }
  })()
    .catch(() => {})
    .finally(() => {
      ended = true;
    });
  return {
    messages,
    get ended() {
      return ended;
    },
    async close() {
      controller.abort();
      await done;
    },
  };
}

describeEachDatabase('MCP 2026-07-28 through the proxy (raw HTTP)', (kind) => {
  let gateway: TestGateway;
  let upstream: StatelessTestUpstream;
  let sessionUpstream: McpUpstream;
  let proxyUrl: string;
  let agentId: string;
  let auth: Record<string, string>;
  let killKey: string;

  beforeAll(async () => {
    upstream = await startStatelessUpstream();
    sessionUpstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(kind, { mcpLimits: { listTtlMs: LIST_TTL_MS } });
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'modern', url: upstream.url });
    await gateway.registerServer({ tenantId, serverId: 'legacy', url: sessionUpstream.url });
    await gateway.setPolicy(tenantId, { trustedServers: ['modern', 'legacy'] });
    agentId = await gateway.addAgent(tenantId, { allowedTools: ['echo', 'needs_sampling'] });
    auth = apiKeyHeaders(gateway.tenant.key, agentId);
    killKey = await gateway.addApiKey(tenantId, ['agents:kill']);
    proxyUrl = `${gateway.url}/mcp/modern`;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await sessionUpstream?.close();
  });

  const call = (name: string, args: Record<string, unknown> = {}, id: string | number = 1) =>
    request('tools/call', { name, arguments: args }, id);

  it.each([
    [
      'no MCP-Protocol-Version',
      { 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
      call('echo'),
      -32020,
      'MCP_HEADER_MISMATCH',
    ],
    [
      'Mcp-Method unlike the body',
      eraHeaders('tools/list', 'echo'),
      call('echo'),
      -32020,
      'MCP_HEADER_MISMATCH',
    ],
    [
      'Mcp-Name unlike the body',
      eraHeaders('tools/call', 'secret_tool'),
      call('echo'),
      -32020,
      'MCP_HEADER_MISMATCH',
    ],
    ['no Mcp-Name', eraHeaders('tools/call'), call('echo'), -32020, 'MCP_HEADER_MISMATCH'],
    [
      'no client capabilities in _meta',
      eraHeaders('tools/list'),
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } },
      },
      -32602,
      'MCP_META_INVALID',
    ],
  ])(
    'refuses a request with %s: 400, the revision’s code, its id, nothing forwarded',
    async (_case, headers, body, code, reasonCode) => {
      const before = upstream.log.length;
      const answer = await mcpFetch(proxyUrl, { body, headers: { ...auth, ...headers } });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code,
          message: expect.stringMatching(new RegExp(`^${reasonCode}`)),
          data: { reasonCode },
        },
      });
      expect(upstream.log.length).toBe(before);
    },
  );

  it('refuses an unknown revision with UnsupportedProtocolVersion naming what it serves', async () => {
    const before = upstream.log.length;
    const body = call('echo', {}, 'v');
    body.params._meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' };
    const answer = await mcpFetch(proxyUrl, {
      body,
      headers: {
        ...auth,
        ...eraHeaders('tools/call', 'echo'),
        'mcp-protocol-version': '1900-01-01',
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.id).toBe('v');
    expect(answer.body.error).toMatchObject({
      code: -32022,
      data: {
        supported: [VERSION],
        requested: '1900-01-01',
        reasonCode: 'MCP_PROTOCOL_VERSION_UNSUPPORTED',
      },
    });
    expect(upstream.log.length).toBe(before);
  });

  it('acknowledges a notification (202) without forwarding it, and refuses a response', async () => {
    const before = upstream.log.length;
    const notified = await mcpFetch(proxyUrl, {
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: META } },
      headers: { ...auth, ...eraHeaders('notifications/cancelled') },
    });
    expect(notified.status).toBe(202);
    const answered = await mcpFetch(proxyUrl, {
      body: { jsonrpc: '2.0', id: 3, result: { _meta: META } },
      headers: { ...auth, ...eraHeaders('x') },
    });
    expect({ status: answered.status, reason: answered.body.error.data.reasonCode }).toEqual({
      status: 400,
      reason: 'REQUEST_INVALID',
    });
    expect(upstream.log.length).toBe(before);
  });

  it('forwards an allowed tools/call with the era’s headers and _meta, never the client’s token', async () => {
    const body = call('echo', { text: 'hi', region: 'eu-west1' }, 'c1');
    const answer = await mcpFetch(proxyUrl, {
      body,
      headers: { ...auth, ...eraHeaders('tools/call', 'echo'), 'mcp-param-region': 'eu-west1' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      jsonrpc: '2.0',
      id: 'c1',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] },
    });
    const forwarded = upstream.log.at(-1)!;
    expect(forwarded.method).toBe('tools/call');
    expect(forwarded.body).toEqual(body);
    expect(forwarded.headers).toMatchObject({
      'mcp-protocol-version': VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
      'mcp-param-region': 'eu-west1',
    });
    expect(forwarded.headers.authorization).toBeUndefined();
    expect(forwarded.headers['x-agent-id']).toBeUndefined();
  });

  it('denies a tool the agent may not call: JSON-RPC -32001 on 200, audited, nothing forwarded', async () => {
    const before = upstream.log.length;
    const answer = await mcpFetch(proxyUrl, {
      body: call('secret_tool', {}, 'd1'),
      headers: { ...auth, ...eraHeaders('tools/call', 'secret_tool') },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 'd1',
      error: { code: -32001, data: { reasonCode: 'AGENT_TOOL_NOT_ALLOWED' } },
    });
    const entry = await findAuditEntry(gateway.db, answer.body.error.data.auditId);
    expect(entry).toMatchObject({
      action: 'inspect.deny',
      metadata: { reasonCode: 'AGENT_TOOL_NOT_ALLOWED', tool: 'secret_tool', serverId: 'modern' },
    });
    expect(upstream.log.length).toBe(before);
  });

  it('refuses a credential in _meta (MCP_TOKEN_PASSTHROUGH), audited, nothing forwarded', async () => {
    const before = upstream.log.length;
    const body = request('resources/list', {}, 't1');
    (body.params._meta as Record<string, unknown>)['com.example/authorization'] = 'Bearer abc.def';
    const answer = await mcpFetch(proxyUrl, {
      body,
      headers: { ...auth, ...eraHeaders('resources/list') },
    });
    expect(answer.body).toMatchObject({
      id: 't1',
      error: { code: -32001, data: { reasonCode: 'MCP_TOKEN_PASSTHROUGH' } },
    });
    expect(await findAuditEntry(gateway.db, answer.body.error.data.auditId)).toMatchObject({
      action: 'inspect.deny',
      metadata: { reasonCode: 'MCP_TOKEN_PASSTHROUGH', method: 'resources/list' },
    });
    expect(upstream.log.length).toBe(before);
  });

  it('relays progress before the result on an event stream', async () => {
    const body = call('echo', { text: 'slow', progress: true }, 'p1');
    (body.params._meta as Record<string, unknown>).progressToken = 'tok';
    const answer = await mcpFetch(proxyUrl, {
      body,
      headers: { ...auth, ...eraHeaders('tools/call', 'echo') },
    });
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(answer.messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok', progress: 1, total: 2 },
      },
      {
        jsonrpc: '2.0',
        id: 'p1',
        result: { resultType: 'complete', content: [{ type: 'text', text: 'slow' }] },
      },
    ]);
  });

  it('relays the upstream’s own errors with their HTTP status (400 -32021, 404 -32601)', async () => {
    const missing = await mcpFetch(proxyUrl, {
      body: call('needs_sampling', {}, 's1'),
      headers: { ...auth, ...eraHeaders('tools/call', 'needs_sampling') },
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ id: 's1', error: { code: -32021 } });
    const unknown = await mcpFetch(proxyUrl, {
      body: request('ping', {}, 'u1'),
      headers: { ...auth, ...eraHeaders('ping') },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ id: 'u1', error: { code: -32601 } });
  });

  it('answers tools/list for the agent alone: filtered, by name, private, with the gateway’s TTL', async () => {
    const answer = await mcpFetch(proxyUrl, {
      body: request('tools/list', {}, 'l1'),
      headers: { ...auth, ...eraHeaders('tools/list') },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['echo']);
    const everything = await gateway.addAgent(gateway.tenant.id, { allowedTools: ['*'] });
    const all = await mcpFetch(proxyUrl, {
      body: request('tools/list', {}, 'l2'),
      headers: { ...apiKeyHeaders(gateway.tenant.key, everything), ...eraHeaders('tools/list') },
    });
    // The upstream lists secret_tool first; the gateway's order is by name.
    expect(all.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      'echo',
      'secret_tool',
    ]);
    expect(answer.body.result).toMatchObject({
      resultType: 'complete',
      cacheScope: 'private',
      ttlMs: LIST_TTL_MS,
    });
  });

  it('answers server/discover as the gateway sees the server for this agent', async () => {
    const answer = await mcpFetch(proxyUrl, {
      body: request('server/discover', {}, 'sd'),
      headers: { ...auth, ...eraHeaders('server/discover') },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({
      supportedVersions: [VERSION],
      capabilities: { tools: { listChanged: true } },
      cacheScope: 'private',
      ttlMs: LIST_TTL_MS,
      _meta: {
        'io.modelcontextprotocol/serverInfo': { name: 'agent-gateway' },
        'dev.agent-gateway/upstreamServerInfo': { name: 'stateless-test', version: '1' },
        'dev.agent-gateway/tools': ['echo'],
      },
    });
  });

  it('keeps a listen stream: the upstream’s changes, the gateway’s own on a policy change, ended by a kill', async () => {
    const { gateway: gw } = { gateway };
    const key = generateEd25519KeyMaterial();
    const { id: listener } = await createAgent(gw.db, {
      tenantId: gw.tenant.id,
      name: `listen-${randomBytes(3).toString('hex')}`,
      allowedTools: ['echo', 'secret_tool'],
      publicKey: key.publicKeyMultibase,
    });
    await gw.sync();
    const headers = {
      ...apiKeyHeaders(gw.tenant.key, listener),
      ...eraHeaders('subscriptions/listen'),
    };
    const stream = openListen(proxyUrl, headers, 'sub-1');
    const listedBefore = upstream.log.filter((r) => r.method === 'tools/list').length;
    await expect.poll(() => stream.messages.length, EVENTUALLY).toBeGreaterThanOrEqual(1);
    expect(stream.messages[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true } },
    });
    // The gateway's baseline of what this agent sees, asked of the upstream once.
    await expect
      .poll(() => upstream.log.filter((r) => r.method === 'tools/list').length, EVENTUALLY)
      .toBe(listedBefore + 1);

    upstream.notifyTools();
    await expect.poll(() => stream.messages.length, EVENTUALLY).toBe(2);
    expect(stream.messages[1]).toMatchObject({ method: 'notifications/tools/list_changed' });
    // The upstream's change makes the gateway take its baseline again.
    await expect
      .poll(() => upstream.log.filter((r) => r.method === 'tools/list').length, EVENTUALLY)
      .toBe(listedBefore + 2);

    await updateAgent(gw.db, gw.tenant.id, listener, { allowedTools: ['echo'] });
    await gw.sync();
    await expect.poll(() => stream.messages.length, EVENTUALLY).toBe(3);
    expect(stream.messages[2]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
    });

    const killed = await postAsClient(
      `${gw.url}/api/v2/infrastructure/agents/${encodeURIComponent(key.publicKeyMultibase)}/kill`,
      { reason: 'stateless listen kill test' },
      { key: killKey },
    );
    expect(killed.status).toBe(200);
    await expect.poll(() => stream.ended, EVENTUALLY).toBe(true);
    await expect.poll(() => upstream.listening, EVENTUALLY).toBe(0);
    await stream.close();

    const after = await mcpFetch(proxyUrl, {
      body: call('echo', {}, 'k'),
      headers: { ...apiKeyHeaders(gw.tenant.key, listener), ...eraHeaders('tools/call', 'echo') },
    });
    expect(after.body).toMatchObject({ id: 'k', error: { data: { reasonCode: 'AGENT_REVOKED' } } });
  });

  it('serves a stateless client of a session-era upstream over the gateway’s session, learnt once', async () => {
    const legacyUrl = `${gateway.url}/mcp/legacy`;
    const sessionless = () =>
      sessionUpstream.log.filter((r) => r.httpMethod === 'POST' && r.sessionId === undefined)
        .length;
    const answer = await mcpFetch(legacyUrl, {
      body: request('tools/list', {}, 'e1'),
      headers: { ...auth, ...eraHeaders('tools/list') },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: 'e1',
      result: { resultType: 'complete', cacheScope: 'private' },
    });
    // The era was learnt (a refused server/discover) and the bridge opened (initialize).
    const learnt = sessionless();
    const again = await mcpFetch(legacyUrl, {
      body: request('tools/list', {}, 'e2'),
      headers: { ...auth, ...eraHeaders('tools/list') },
    });
    expect(again.body).toMatchObject({ id: 'e2', result: { resultType: 'complete' } });
    expect(sessionless()).toBe(learnt);
  });

  it('opens a session for a session client of a stateless-only upstream, answering initialize from its server/discover', async () => {
    const before = upstream.log.length;
    const answer = await mcpFetch(proxyUrl, { body: initializeMessage('i1'), headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toEqual(expect.any(String));
    expect(answer.body).toMatchObject({
      id: 'i1',
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'stateless-test', version: '1' },
      },
    });
    // The upstream saw the refused initialize, then a stateless server/discover.
    expect(upstream.log.slice(before).map((r) => r.method)).toEqual([
      'initialize',
      'server/discover',
    ]);
  });
});
