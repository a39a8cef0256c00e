// The forwarding client against a real MCP server (the official SDK), in the four transport
// configurations: JSON or SSE answers, stateful or stateless.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createUpstreamClient,
  type UpstreamClient,
  UpstreamError,
} from '../../../data-plane/upstream/index.js';
import { INSPECT_OFFERED_PROTOCOL_VERSION } from '../../../shared/mcp/protocol.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';

const CONFIGS = [
  { responseMode: 'json', stateful: true },
  { responseMode: 'json', stateful: false },
  { responseMode: 'sse', stateful: true },
  { responseMode: 'sse', stateful: false },
] as const;

function call(id: string | number, name: string, args: Record<string, unknown> = {}) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  };
}

describe.each(CONFIGS)(
  'forward to an SDK upstream ($responseMode, stateful: $stateful)',
  (config) => {
    let upstream: McpUpstream;
    let client: UpstreamClient;
    const target = () => ({ serverKey: 'tenant-a/server-1', url: upstream.url });

    beforeAll(async () => {
      upstream = await startMcpUpstream(config);
    });
    afterAll(async () => {
      await upstream.close();
    });
    beforeEach(() => {
      client = createUpstreamClient({ connectTimeoutMs: 2_000, readTimeoutMs: 10_000 });
    });
    afterEach(async () => {
      await client.close();
    });

    it('round-trips a tool call with the result the SDK client gets, under the agent id', async () => {
      const args = { text: 'héllo wörld' };
      const forwarded = await client.forward({
        target: target(),
        sessionKey: 'tenant-a/agent-1/server-1',
        message: call('agent-req-7', 'echo', args),
      });
      expect(forwarded.httpStatus).toBe(200);
      expect(forwarded.response.id).toBe('agent-req-7');
      expect(forwarded.durationMs).toBeGreaterThan(0);

      const sdk = new Client({ name: 'reference', version: '1.0.0' });
      await sdk.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
      try {
        const reference = await sdk.callTool({ name: 'echo', arguments: args });
        expect('result' in forwarded.response && forwarded.response.result).toEqual(reference);
      } finally {
        await sdk.close();
      }
    });

    it('keeps a numeric request id as a number', async () => {
      const { response } = await client.forward({
        target: target(),
        sessionKey: 'k-numeric',
        message: call(42, 'echo', { text: 'n' }),
      });
      expect(response.id).toBe(42);
    });

    it('passes a tool error result through as the response', async () => {
      const { response, httpStatus } = await client.forward({
        target: target(),
        sessionKey: 'k-fail',
        message: call(1, 'fail'),
      });
      expect(httpStatus).toBe(200);
      expect(response).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { isError: true, content: [{ type: 'text', text: 'failure requested' }] },
      });
    });

    it('passes the upstream JSON-RPC error for an unknown method through', async () => {
      const { response } = await client.forward({
        target: target(),
        sessionKey: 'k-unknown-method',
        message: { jsonrpc: '2.0', id: 'x1', method: 'no/such/method', params: {} },
      });
      expect(response).toMatchObject({ jsonrpc: '2.0', id: 'x1', error: { code: -32601 } });
    });

    it('passes the SDK answer for an unknown tool through', async () => {
      const sdk = new Client({ name: 'reference', version: '1.0.0' });
      await sdk.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
      const reference = await sdk
        .request(
          { method: 'tools/call', params: { name: 'nope', arguments: {} } },
          (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
        )
        .then((result) => ({ result }))
        .catch((error: { code: number; message: string }) => ({
          error: { code: error.code, message: error.message },
        }));
      await sdk.close();
      const { response } = await client.forward({
        target: target(),
        sessionKey: 'k-unknown-tool',
        message: call(5, 'nope'),
      });
      if ('result' in reference) expect(response).toEqual({ jsonrpc: '2.0', id: 5, ...reference });
      else expect(response).toMatchObject({ id: 5, error: { code: reference.error.code } });
    });

    it('reuses the session for one key and opens distinct sessions for distinct keys', async () => {
      const before = upstream.sessionsCreated;
      const a1 = await client.forward({
        target: target(),
        sessionKey: 'A',
        message: call(1, 'echo'),
      });
      const a2 = await client.forward({
        target: target(),
        sessionKey: 'A',
        message: call(2, 'echo'),
      });
      const b1 = await client.forward({
        target: target(),
        sessionKey: 'B',
        message: call(3, 'echo'),
      });
      if (config.stateful) {
        expect(a1.sessionId).toBeTypeOf('string');
        expect(a2.sessionId).toBe(a1.sessionId);
        expect(b1.sessionId).not.toBe(a1.sessionId);
        expect(upstream.sessionsCreated - before).toBe(2);
      } else {
        expect(a1.sessionId).toBeUndefined();
        expect(b1.sessionId).toBeUndefined();
      }
      // initialize once per key, never per call
      const inits = upstream.log.filter((r) => r.rpcMethod === 'initialize').length;
      expect(inits).toBeGreaterThanOrEqual(2);
      const more = await client.forward({
        target: target(),
        sessionKey: 'A',
        message: call(4, 'echo'),
      });
      expect(more.response.id).toBe(4);
      expect(upstream.log.filter((r) => r.rpcMethod === 'initialize').length).toBe(inits);
    });

    it('sends the negotiated protocol version and the session id after initialize', async () => {
      const from = upstream.log.length;
      await client.forward({ target: target(), sessionKey: 'k-headers', message: call(1, 'echo') });
      const seen = upstream.log.slice(from);
      expect(seen.map((r) => r.rpcMethod)).toEqual([
        'initialize',
        'notifications/initialized',
        'tools/call',
      ]);
      expect(seen[0]!.protocolVersion).toBeUndefined();
      expect(seen[0]!.sessionId).toBeUndefined();
      expect(seen[1]!.protocolVersion).toBe(INSPECT_OFFERED_PROTOCOL_VERSION);
      expect(seen[2]!.protocolVersion).toBe(INSPECT_OFFERED_PROTOCOL_VERSION);
      if (config.stateful) {
        expect(seen[1]!.sessionId).toBeTypeOf('string');
        expect(seen[2]!.sessionId).toBe(seen[1]!.sessionId);
      } else {
        expect(seen[2]!.sessionId).toBeUndefined();
      }
    });

    it('opens ONE session for concurrent first calls with the same key', async () => {
      const from = upstream.log.length;
      const before = upstream.sessionsCreated;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          client.forward({
            target: target(),
            sessionKey: 'k-concurrent',
            message: call(i, 'echo'),
          }),
        ),
      );
      expect(results.map((r) => r.response.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const inits = upstream.log.slice(from).filter((r) => r.rpcMethod === 'initialize');
      expect(inits).toHaveLength(1);
      if (config.stateful) {
        expect(upstream.sessionsCreated - before).toBe(1);
        expect(new Set(results.map((r) => r.sessionId)).size).toBe(1);
      }
    });

    it('re-initializes once and retries once when the upstream forgot the session', async () => {
      const first = await client.forward({
        target: target(),
        sessionKey: 'k-expiry',
        message: call(1, 'echo'),
      });
      await upstream.expireSessions();
      const from = upstream.log.length;
      const callsBefore = upstream.calls.get('echo') ?? 0;
      const second = await client.forward({
        target: target(),
        sessionKey: 'k-expiry',
        message: call(2, 'echo', { text: 'again' }),
      });
      expect(second.response).toMatchObject({
        id: 2,
        result: { structuredContent: { text: 'again' } },
      });
      expect(upstream.calls.get('echo')).toBe(callsBefore + 1);
      const methods = upstream.log.slice(from).map((r) => r.rpcMethod);
      if (config.stateful) {
        expect(second.sessionId).not.toBe(first.sessionId);
        expect(methods).toEqual([
          'tools/call', // 404: session gone
          'initialize',
          'notifications/initialized',
          'tools/call',
        ]);
      } else {
        expect(methods).toEqual(['tools/call']);
      }
    });

    it('sends the access token as a bearer Authorization header, also during initialize', async () => {
      const from = upstream.log.length;
      await client.forward({
        target: target(),
        sessionKey: 'k-token',
        message: call(1, 'echo'),
        accessToken: 'minted.jwt.token',
      });
      expect(upstream.lastAuthorization).toBe('Bearer minted.jwt.token');
      for (const request of upstream.log.slice(from)) {
        expect(request.authorization).toBe('Bearer minted.jwt.token');
      }
      await client.forward({ target: target(), sessionKey: 'k-token', message: call(2, 'echo') });
      expect(upstream.lastAuthorization).toBeUndefined();
    });

    it('lists the tools with their annotations', async () => {
      const tools = await client.listTools(target(), { accessToken: 'list-token' });
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual([
        'drop_table',
        'echo',
        'fail',
        'notify_then_echo',
        'read_rows',
        'slow',
      ]);
      expect(byName.get('drop_table')!.annotations).toMatchObject({ destructiveHint: true });
      expect(byName.get('read_rows')!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.get('echo')!.annotations).toBeUndefined();
      expect(upstream.lastAuthorization).toBe('Bearer list-token');
    });

    it('aborts a slow call with MCP_UPSTREAM_ABORTED', async () => {
      await client.forward({ target: target(), sessionKey: 'k-abort', message: call(0, 'echo') });
      const controller = new AbortController();
      const started = performance.now();
      const pending = client.forward({
        target: target(),
        sessionKey: 'k-abort',
        message: call(1, 'slow', { ms: 60_000 }),
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 100);
      const error = await pending.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).code).toBe('MCP_UPSTREAM_ABORTED');
      // Ended by the abort, long before the slow call would have answered.
      expect(performance.now() - started).toBeLessThan(30_000);
    });

    if (config.responseMode === 'sse') {
      it('skips the notifications sent before the response in the event stream', async () => {
        const { response } = await client.forward({
          target: target(),
          sessionKey: 'k-notify',
          message: call('n1', 'notify_then_echo', { text: 'after', count: 3 }),
        });
        expect(response).toMatchObject({
          id: 'n1',
          result: { structuredContent: { text: 'after' } },
        });
      });
    }
  },
);

describe('dropSessions', () => {
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('forgets the matching sessions only: the next call opens a new one', async () => {
    const client = createUpstreamClient();
    const target = { serverKey: 's', url: upstream.url };
    const a = await client.forward({ target, sessionKey: 't/agent-1/s', message: call(1, 'echo') });
    const b = await client.forward({ target, sessionKey: 't/agent-2/s', message: call(2, 'echo') });
    client.dropSessions((key) => key.startsWith('t/agent-1/'));
    const a2 = await client.forward({
      target,
      sessionKey: 't/agent-1/s',
      message: call(3, 'echo'),
    });
    const b2 = await client.forward({
      target,
      sessionKey: 't/agent-2/s',
      message: call(4, 'echo'),
    });
    expect(a2.sessionId).not.toBe(a.sessionId);
    expect(b2.sessionId).toBe(b.sessionId);
    await client.close();
  });

  it('keeps at most maxSessions sessions, forgetting the least recently used', async () => {
    const client = createUpstreamClient({ maxSessions: 2 });
    const target = { serverKey: 's', url: upstream.url };
    const first = await client.forward({ target, sessionKey: 'k1', message: call(1, 'echo') });
    await client.forward({ target, sessionKey: 'k2', message: call(2, 'echo') });
    await client.forward({ target, sessionKey: 'k1', message: call(3, 'echo') }); // k1 most recent
    await client.forward({ target, sessionKey: 'k3', message: call(4, 'echo') }); // evicts k2
    const k1 = await client.forward({ target, sessionKey: 'k1', message: call(5, 'echo') });
    expect(k1.sessionId).toBe(first.sessionId);
    const before = upstream.sessionsCreated;
    await client.forward({ target, sessionKey: 'k2', message: call(6, 'echo') });
    expect(upstream.sessionsCreated).toBe(before + 1);
    await client.close();
  });
});
