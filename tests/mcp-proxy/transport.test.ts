// The proxy's downstream Streamable HTTP transport over raw fetch (issue 14 items 1 and 8): the
// Origin rule (DNS rebinding), sessions bound to their agent, MCP-Protocol-Version, body limits
// and shapes, notifications, DELETE, concurrent requests on one session and the per-session
// concurrency limit. Every refusal is checked for its exact status and reasonCode, and for having
// forwarded nothing to the real SDK upstream behind the proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../support/databases.js';
import type { McpUpstream } from '../support/mcp-upstream.js';
import { type ProxyFixture, startProxyFixture } from './support.js';
import {
  apiKeyHeaders,
  expectRefusal,
  initializeMessage,
  LATEST_VERSION,
  mcpFetch,
  openRawSession,
  postInFlight,
  toolsCall,
  toolsList,
} from './transport-support.js';

/** The per-session limit this gateway runs with: the conformance suite's parallelism. */
const PER_SESSION = 8;

/**
 * A raw session whose notifications/initialized has reached the upstream (the proxy relays
 * notifications after answering 202), so what the upstream sees next is the test's own doing.
 */
async function openSettled(fixture: ProxyFixture, auth: Record<string, string>) {
  const initialized = () =>
    fixture.upstream.log.filter((entry) => entry.rpcMethod === 'notifications/initialized');
  const before = initialized().length;
  const session = await openRawSession(fixture.proxyUrl, auth);
  await expect.poll(() => initialized().length).toBe(before + 1);
  return { ...session, upstreamSessionId: initialized().at(-1)?.sessionId as string };
}

/** What the upstream has seen so far (compared before and after a refusal). */
function seen(upstream: McpUpstream) {
  return { requests: upstream.log.length, calls: Object.fromEntries(upstream.calls) };
}

describeEachDatabase('MCP proxy transport (raw HTTP)', (kind) => {
  let fixture: ProxyFixture;
  let agentId: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    fixture = await startProxyFixture(
      kind,
      { blockTool: true },
      { mcpSessionLimits: { perSessionInFlight: PER_SESSION } },
    );
    agentId = await fixture.gateway.addAgent(fixture.gateway.tenant.id);
    auth = apiKeyHeaders(fixture.gateway.tenant.key, agentId);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  describe('Origin', () => {
    it.each(['POST', 'GET', 'DELETE'])(
      'refuses a foreign Origin on %s with 403 MCP_ORIGIN_FORBIDDEN, forwarding nothing',
      async (method) => {
        const { proxyUrl, upstream } = fixture;
        const { headers } = await openSettled(fixture, auth);
        const before = seen(upstream);
        for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'null']) {
          const answer = await mcpFetch(proxyUrl, {
            method,
            headers: { ...headers, origin },
            ...(method === 'POST' ? { body: toolsCall('echo', { text: 'x' }) } : {}),
          });
          expectRefusal(answer, 403, 'MCP_ORIGIN_FORBIDDEN');
        }
        expect(seen(upstream)).toEqual(before);
        // The session was not touched: it still works without the foreign Origin.
        const listed = await mcpFetch(proxyUrl, { body: toolsList(), headers });
        expect(listed.status).toBe(200);
      },
    );

    it('refuses a foreign Origin before authentication (no credentials needed to be refused)', async () => {
      const answer = await mcpFetch(fixture.proxyUrl, {
        body: initializeMessage(),
        headers: { origin: 'https://evil.example' },
      });
      expectRefusal(answer, 403, 'MCP_ORIGIN_FORBIDDEN');
    });

    it('accepts loopback origins, the gateway’s own origin and no Origin at all', async () => {
      const { proxyUrl, gateway } = fixture;
      const origins = [
        'http://localhost:1234',
        'http://127.0.0.1',
        'http://[::1]:8080',
        new URL(gateway.url).origin,
        undefined,
      ];
      for (const origin of origins) {
        const answer = await mcpFetch(proxyUrl, {
          body: initializeMessage(),
          headers: { ...auth, ...(origin === undefined ? {} : { origin }) },
        });
        expect(answer.status, String(origin)).toBe(200);
        expect(answer.body.result.protocolVersion).toBe(LATEST_VERSION);
        expect(answer.headers.get('mcp-session-id')).toBeTruthy();
      }
    });
  });

  describe('sessions', () => {
    it('refuses a request other than initialize without Mcp-Session-Id: 400 MCP_SESSION_REQUIRED', async () => {
      const { proxyUrl, upstream } = fixture;
      const before = seen(upstream);
      for (const method of ['POST', 'GET', 'DELETE']) {
        const answer = await mcpFetch(proxyUrl, {
          method,
          headers: auth,
          ...(method === 'POST' ? { body: toolsList() } : {}),
        });
        expectRefusal(answer, 400, 'MCP_SESSION_REQUIRED');
      }
      expect(seen(upstream)).toEqual(before);
    });

    it('refuses an unknown session: 404 MCP_SESSION_NOT_FOUND', async () => {
      const { proxyUrl, upstream } = fixture;
      const before = seen(upstream);
      for (const method of ['POST', 'GET', 'DELETE']) {
        const answer = await mcpFetch(proxyUrl, {
          method,
          headers: { ...auth, 'mcp-session-id': 'no-such-session' },
          ...(method === 'POST' ? { body: toolsCall('echo') } : {}),
        });
        expectRefusal(answer, 404, 'MCP_SESSION_NOT_FOUND');
      }
      expect(seen(upstream)).toEqual(before);
    });

    it('refuses a session used by another agent, another tenant or for another server: 403 MCP_SESSION_FORBIDDEN', async () => {
      const { proxyUrl, upstream, gateway } = fixture;
      const { sessionId } = await openSettled(fixture, auth);
      const otherAgent = await gateway.addAgent(gateway.tenant.id);
      const otherTenant = await gateway.addTenant();
      const before = seen(upstream);
      const strangers = [
        apiKeyHeaders(gateway.tenant.key, otherAgent),
        // Same agent id, another tenant's key.
        apiKeyHeaders(otherTenant.key, agentId),
      ];
      for (const stranger of strangers) {
        for (const method of ['POST', 'GET', 'DELETE']) {
          const answer = await mcpFetch(proxyUrl, {
            method,
            headers: { ...stranger, 'mcp-session-id': sessionId },
            ...(method === 'POST' ? { body: toolsCall('echo', { text: 'stolen' }) } : {}),
          });
          expectRefusal(answer, 403, 'MCP_SESSION_FORBIDDEN');
        }
      }
      // The session of server upstream-1 used on another server's path.
      const elsewhere = await mcpFetch(`${gateway.url}/mcp/other-server`, {
        body: toolsList(),
        headers: { ...auth, 'mcp-session-id': sessionId },
      });
      expectRefusal(elsewhere, 403, 'MCP_SESSION_FORBIDDEN');
      expect(seen(upstream)).toEqual(before);
      // The owner's session is still alive (a stranger's DELETE did not end it).
      const listed = await mcpFetch(proxyUrl, {
        body: toolsList(),
        headers: { ...auth, 'mcp-session-id': sessionId },
      });
      expect(listed.status).toBe(200);
    });

    it('DELETE ends the session: the next request is 404 and the upstream session is deleted', async () => {
      const { proxyUrl, upstream } = fixture;
      const {
        sessionId,
        headers,
        upstreamSessionId: upstreamSession,
      } = await openSettled(fixture, auth);
      expect(upstream.liveSessions).toContain(upstreamSession);
      const ended = await mcpFetch(proxyUrl, { method: 'DELETE', headers });
      expect(ended.status).toBe(200);
      const after = await mcpFetch(proxyUrl, { body: toolsList(), headers });
      expectRefusal(after, 404, 'MCP_SESSION_NOT_FOUND');
      expect(after.body.error.message).toContain(sessionId);
      await expect
        .poll(() =>
          upstream.log.some(
            (entry) => entry.httpMethod === 'DELETE' && entry.sessionId === upstreamSession,
          ),
        )
        .toBe(true);
      await expect
        .poll(() => upstream.liveSessions.includes(upstreamSession as string))
        .toBe(false);
    });
  });

  describe('MCP-Protocol-Version', () => {
    it('refuses an unsupported version: 400 MCP_PROTOCOL_VERSION_UNSUPPORTED, forwarding nothing', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const before = seen(upstream);
      for (const version of ['1999-01-01', '2025-13-45', 'latest']) {
        const answer = await mcpFetch(proxyUrl, {
          body: toolsCall('echo'),
          headers: { ...headers, 'mcp-protocol-version': version },
        });
        expectRefusal(answer, 400, 'MCP_PROTOCOL_VERSION_UNSUPPORTED');
        expect(answer.body.error.message).toContain(version);
        const listen = await mcpFetch(proxyUrl, {
          method: 'GET',
          headers: { ...headers, 'mcp-protocol-version': version },
        });
        expectRefusal(listen, 400, 'MCP_PROTOCOL_VERSION_UNSUPPORTED');
      }
      expect(seen(upstream)).toEqual(before);
    });

    it('serves a request carrying an older supported version (2025-03-26) on a 2025-11-25 session', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const older = { ...headers, 'mcp-protocol-version': '2025-03-26' };
      const [listed, called, current] = await Promise.all([
        mcpFetch(proxyUrl, { body: toolsList(1), headers: older }),
        mcpFetch(proxyUrl, { body: toolsCall('echo', { text: 'old' }, 2), headers: older }),
        mcpFetch(proxyUrl, { body: toolsCall('echo', { text: 'new' }, 3), headers }),
      ]);
      expect(listed.status).toBe(200);
      expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toContain('echo');
      expect(called.status).toBe(200);
      expect(called.body).toMatchObject({ id: 2, result: { structuredContent: { text: 'old' } } });
      expect(current.body).toMatchObject({ id: 3, result: { structuredContent: { text: 'new' } } });
      // The upstream got each request with the version its client sent.
      const versions = upstream.log
        .filter((entry) => entry.rpcMethod === 'tools/call' || entry.rpcMethod === 'tools/list')
        .slice(-3)
        .map((entry) => entry.protocolVersion)
        .sort();
      expect(versions).toEqual(['2025-03-26', '2025-03-26', LATEST_VERSION]);
    });
  });

  describe('bodies', () => {
    it('refuses a body over 4 MiB with 413 REQUEST_TOO_LARGE, forwarding nothing', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const before = seen(upstream);
      const big = toolsCall('echo', { text: 'x'.repeat(4 * 1024 * 1024) });
      const answer = await mcpFetch(proxyUrl, { body: big, headers });
      expectRefusal(answer, 413, 'REQUEST_TOO_LARGE');
      expect(seen(upstream)).toEqual(before);
    });

    it.each([
      { name: 'invalid JSON', body: '{"jsonrpc": "2.0", "id": 1,', rpcCode: -32700 },
      { name: 'a JSON string', body: '"tools/list"', rpcCode: -32600 },
      { name: 'no jsonrpc member', body: { id: 1, method: 'tools/list' }, rpcCode: -32600 },
      {
        name: 'jsonrpc 1.0',
        body: { jsonrpc: '1.0', id: 1, method: 'tools/list' },
        rpcCode: -32600,
      },
      {
        name: 'params an array',
        body: { jsonrpc: '2.0', id: 1, method: 'x', params: [] },
        rpcCode: -32600,
      },
      {
        name: 'a null id request',
        body: { jsonrpc: '2.0', id: null, method: 'ping' },
        rpcCode: -32600,
      },
      { name: 'an empty batch', body: [], rpcCode: -32600 },
      {
        name: 'a batch with an invalid member',
        body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 7],
        rpcCode: -32600,
      },
    ])('refuses $name with 400 REQUEST_INVALID, forwarding nothing', async ({ body, rpcCode }) => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const before = seen(upstream);
      const answer = await mcpFetch(proxyUrl, { body, headers });
      expectRefusal(answer, 400, 'REQUEST_INVALID');
      expect(answer.body.error.code).toBe(rpcCode);
      expect(seen(upstream)).toEqual(before);
    });

    it('refuses an initialize nested 100 000 levels deep with 400 REQUEST_INVALID at once, opening nothing', async () => {
      const { proxyUrl, upstream } = fixture;
      const before = seen(upstream);
      // JSON.parse builds it; only a recursive walk or JSON.stringify of it would throw.
      const init = JSON.stringify(initializeMessage('deep'));
      const body = `${init.slice(0, -2)},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
      expect(() => JSON.parse(body)).not.toThrow();
      const answer = await mcpFetch(proxyUrl, { body, headers: auth });
      expectRefusal(answer, 400, 'REQUEST_INVALID');
      expect(answer.body.error.code).toBe(-32600);
      expect(answer.headers.get('mcp-session-id')).toBeNull();
      expect(seen(upstream)).toEqual(before);
    });

    it.each([
      ['65 levels (one more than inspect allows)', 63],
      ['100 000 levels', 100_000],
    ])(
      'refuses a tools/call whose params nest %s with 400 REQUEST_INVALID, forwarding nothing',
      async (_name, extra) => {
        const { proxyUrl, upstream } = fixture;
        const { headers } = await openSettled(fixture, auth);
        const before = seen(upstream);
        // params (1) > arguments (2) > deep (3) > … : `extra` arrays below arguments.
        const call = JSON.stringify(toolsCall('echo', { text: 'x' }));
        const body = `${call.slice(0, -3)},"deep":${'['.repeat(extra)}${']'.repeat(extra)}}}}`;
        const answer = await mcpFetch(proxyUrl, { body, headers });
        expectRefusal(answer, 400, 'REQUEST_INVALID');
        expect(seen(upstream)).toEqual(before);
        // A batch holding it is refused alike.
        const batch = await mcpFetch(proxyUrl, {
          body: `[${body}]`,
          headers: { ...headers, 'mcp-protocol-version': '2025-03-26' },
        });
        expectRefusal(batch, 400, 'REQUEST_INVALID');
        expect(seen(upstream)).toEqual(before);
      },
    );

    it('forwards a tools/call whose params nest exactly 64 levels, as inspect does', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const calls = upstream.calls.get('echo') ?? 0;
      const call = JSON.stringify(toolsCall('echo', { text: 'deep enough' }));
      const body = `${call.slice(0, -3)},"deep":${'['.repeat(62)}${']'.repeat(62)}}}}`;
      const answer = await mcpFetch(proxyUrl, { body, headers });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: { structuredContent: { text: 'deep enough' } } });
      expect(upstream.calls.get('echo')).toBe(calls + 1);
    });

    it('answers a 2025-03-26 batch of requests and a notification with one event stream of both responses', async () => {
      const { proxyUrl } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const answer = await mcpFetch(proxyUrl, {
        body: [
          toolsCall('echo', { text: 'batched' }, 'first'),
          { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
          { jsonrpc: '2.0', id: 'second', method: 'ping' },
        ],
        headers: { ...headers, 'mcp-protocol-version': '2025-03-26' },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const byId = Object.fromEntries(answer.messages.map((message) => [message.id, message]));
      expect(Object.keys(byId).sort()).toEqual(['first', 'second']);
      expect(byId.first).toMatchObject({ result: { structuredContent: { text: 'batched' } } });
      expect(byId.second).toEqual({ jsonrpc: '2.0', id: 'second', result: {} });
    });

    it('refuses a GET without Accept: text/event-stream (400 REQUEST_INVALID)', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const before = seen(upstream);
      const answer = await mcpFetch(proxyUrl, {
        method: 'GET',
        headers: { ...headers, accept: 'application/json' },
      });
      expectRefusal(answer, 400, 'REQUEST_INVALID');
      expect(seen(upstream)).toEqual(before);
    });

    it('answers a POST of notifications only with 202 and no body, and relays them', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const answer = await mcpFetch(proxyUrl, {
        body: { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
        headers,
      });
      expect(answer.status).toBe(202);
      expect(answer.messages).toEqual([]);
      await expect
        .poll(() =>
          upstream.log.some((entry) => entry.rpcMethod === 'notifications/roots/list_changed'),
        )
        .toBe(true);
    });
  });

  describe('concurrency', () => {
    it(`answers ${PER_SESSION} concurrent requests on one session, each with its own result`, async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const before = upstream.calls.get('echo') ?? 0;
      const answers = await Promise.all(
        Array.from({ length: PER_SESSION }, (_, i) =>
          mcpFetch(proxyUrl, {
            body:
              i % 4 === 3
                ? { jsonrpc: '2.0', id: `p${i}`, method: 'ping' }
                : toolsCall('echo', { text: `n${i}` }, `c${i}`),
            headers,
          }),
        ),
      );
      answers.forEach((answer, i) => {
        expect(answer.status).toBe(200);
        if (i % 4 === 3) expect(answer.body).toEqual({ jsonrpc: '2.0', id: `p${i}`, result: {} });
        else {
          expect(answer.body).toMatchObject({
            id: `c${i}`,
            result: { structuredContent: { text: `n${i}` } },
          });
        }
      });
      expect(upstream.calls.get('echo')).toBe(before + PER_SESSION - PER_SESSION / 4);
    });

    it('refuses the call over the per-session limit with 429 MCP_CONCURRENCY_LIMIT and Retry-After', async () => {
      const { proxyUrl, upstream } = fixture;
      const { headers } = await openSettled(fixture, auth);
      const already = upstream.calls.get('block') ?? 0;
      const inFlight = Array.from({ length: PER_SESSION }, (_, i) =>
        postInFlight(proxyUrl, toolsCall('block', {}, `b${i}`), headers),
      );
      await upstream.waitForCalls('block', already + PER_SESSION);
      const before = seen(upstream);
      const refused = await mcpFetch(proxyUrl, {
        body: toolsCall('echo', { text: 'one more' }),
        headers,
      });
      expectRefusal(refused, 429, 'MCP_CONCURRENCY_LIMIT');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.body.error.message).toContain(`limit ${PER_SESSION}`);
      expect(seen(upstream)).toEqual(before);
      // Another session of the same agent is not limited by this one.
      const other = await openRawSession(proxyUrl, auth);
      const elsewhere = await mcpFetch(proxyUrl, {
        body: toolsCall('echo', { text: 'elsewhere' }),
        headers: other.headers,
      });
      expect(elsewhere.body).toMatchObject({
        result: { structuredContent: { text: 'elsewhere' } },
      });
      // The calls end (the upstream answers them); the session admits calls again. A client
      // going away would not end them: MCP does not treat a disconnection as a cancellation.
      upstream.releaseBlocked();
      const answers = await Promise.all(inFlight.map((call) => call.answer));
      for (const answer of answers) expect(answer?.text).toContain('released');
      await expect
        .poll(async () => (await mcpFetch(proxyUrl, { body: toolsList(), headers })).status)
        .toBe(200);
    });
  });
});
