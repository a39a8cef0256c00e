// Issue 22 item 8: a token for the MCP server hidden anywhere in `_meta` (nested, in an array,
// under a cookie or a vendor prefix, as a Basic value, a JWT or one of this gateway's own keys) is
// refused on both surfaces, inspect (400) and the MCP proxy (its JSON-RPC deny), audited before the
// answer, and nothing reaches the real SDK upstream; what MCP itself puts in `_meta`
// (progressToken, io.modelcontextprotocol/related-task) passes. A `_meta` too deep to be checked
// is refused too (fail closed).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ProxyFixture, startProxyFixture } from '../../mcp-proxy/support.js';
import {
  apiKeyHeaders,
  initializeMessage,
  mcpFetch,
  openRawSession,
  toolsCall,
} from '../../mcp-proxy/transport-support.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import type { McpUpstream } from '../../support/mcp-upstream.js';
import { expectDeny, findAuditEntry } from '../inspect/support.js';

const SECRET = 'tok-5ecret-9f8e7d6c';
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.${SECRET}`;
const GATEWAY_KEY = `agk_abcdefghij12_${'Q'.repeat(35)}${SECRET.slice(0, 8)}`;

/** Each `_meta` and where the refusal says the token was. */
const HIDDEN_TOKENS: [string, Record<string, unknown>, string][] = [
  [
    '_meta.headers.authorization',
    { headers: { authorization: `Bearer ${SECRET}` } },
    'request.params._meta.headers.authorization',
  ],
  [
    'a deeper nesting',
    { trace: { hops: { next: { 'X-Api-Key': SECRET } } } },
    'request.params._meta.trace.hops.next.X-Api-Key',
  ],
  [
    'an array',
    { forward: [{ kind: 'plain' }, { values: ['x', `Bearer ${SECRET}`] }] },
    'request.params._meta.forward[1].values[1]',
  ],
  ['a cookie', { cookie: `sid=${SECRET}` }, 'request.params._meta.cookie'],
  ['a Basic value', { upstream: `Basic ${SECRET}` }, 'request.params._meta.upstream'],
  ['a JWT-shaped value', { context: { claims: JWT } }, 'request.params._meta.context.claims'],
  ["this gateway's agk_ key", { caller: GATEWAY_KEY }, 'request.params._meta.caller'],
  [
    'a vendor-prefixed name',
    { 'com.example/authorization': SECRET },
    'request.params._meta["com.example/authorization"]',
  ],
];

const MCP_OWN_META = {
  progressToken: 'progress-7',
  'io.modelcontextprotocol/related-task': { taskId: 'task-1' },
};

function nestedMeta(depth: number): Record<string, unknown> {
  let meta: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) meta = { a: meta };
  return meta;
}

/** What the upstream has seen so far: compared before and after a refusal. */
function seen(upstream: McpUpstream) {
  return { requests: upstream.log.length, calls: Object.fromEntries(upstream.calls) };
}

describeEachDatabase('token passthrough in _meta (inspect and the MCP proxy)', (kind) => {
  let fixture: ProxyFixture;
  let agentId: string;
  let session: Record<string, string>;

  beforeAll(async () => {
    fixture = await startProxyFixture(kind);
    agentId = await fixture.gateway.addAgent(fixture.gateway.tenant.id);
    ({ headers: session } = await openRawSession(
      fixture.proxyUrl,
      apiKeyHeaders(fixture.gateway.tenant.key, agentId),
    ));
    // notifications/initialized is relayed after its 202: let it land before counting.
    await vi.waitFor(() => {
      if (!fixture.upstream.log.some((e) => e.rpcMethod === 'notifications/initialized')) {
        throw new Error('notifications/initialized has not reached the upstream yet');
      }
    });
  });
  afterAll(async () => {
    await fixture?.close();
  });

  function inspectWithMeta(meta: unknown, id: string | number = 1) {
    const body = inspectBody(agentId, { server: fixture.serverId, mode: 'production', id });
    (body.request as { params: Record<string, unknown> }).params._meta = meta;
    return fixture.gateway.inspect(body);
  }

  function callWithMeta(meta: unknown, id: string | number = 1) {
    const message = toolsCall('echo', { text: 'hello' }, id);
    return mcpFetch(fixture.proxyUrl, {
      body: { ...message, params: { ...message.params, _meta: meta } },
      headers: session,
    });
  }

  /** A proxy deny: JSON-RPC error on 200 with the code, audited before it was sent. */
  async function expectProxyDeny(
    answer: Awaited<ReturnType<typeof mcpFetch>>,
    reasonCode: string,
    id: string | number,
  ) {
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      id,
      error: { code: -32001, data: { reasonCode } },
    });
    expect(answer.body.error.message).toMatch(new RegExp(`^${reasonCode}: `));
    const row = await findAuditEntry(fixture.gateway.db, answer.body.error.data.auditId);
    expect(row).toMatchObject({
      tenantId: fixture.gateway.tenant.id,
      action: 'inspect.deny',
      metadata: { decision: 'deny', reasonCode },
    });
    return row!;
  }

  describe('inspect', () => {
    it.each(HIDDEN_TOKENS)(
      'refuses a token in %s with 400 MCP_TOKEN_PASSTHROUGH, forwarding nothing',
      async (_name, meta, location) => {
        const before = seen(fixture.upstream);
        const answer = await inspectWithMeta(meta);
        const row = await expectDeny(fixture.gateway, answer, {
          status: 400,
          reasonCode: 'MCP_TOKEN_PASSTHROUGH',
          tenantId: fixture.gateway.tenant.id,
        });
        expect(answer.body.message).toContain(`(${location})`);
        expect(JSON.stringify(answer.body)).not.toContain(SECRET);
        expect(JSON.stringify(row.metadata)).not.toContain(SECRET);
        expect(seen(fixture.upstream)).toEqual(before);
      },
    );

    it('refuses a _meta deeper than 16 levels with 400 MCP_META_TOO_LARGE, forwarding nothing', async () => {
      const before = seen(fixture.upstream);
      const answer = await inspectWithMeta(nestedMeta(17));
      await expectDeny(fixture.gateway, answer, {
        status: 400,
        reasonCode: 'MCP_META_TOO_LARGE',
        tenantId: fixture.gateway.tenant.id,
      });
      expect(seen(fixture.upstream)).toEqual(before);
    });

    it('forwards what MCP itself puts in _meta (progressToken, related-task)', async () => {
      const calls = fixture.upstream.calls.get('echo') ?? 0;
      const answer = await inspectWithMeta({ ...MCP_OWN_META, deep: nestedMeta(15) }, 'ok-1');
      expect({ status: answer.status, decision: answer.body.decision }).toEqual({
        status: 200,
        decision: 'allow',
      });
      expect(fixture.upstream.calls.get('echo')).toBe(calls + 1);
    });
  });

  describe('MCP proxy', () => {
    it.each(HIDDEN_TOKENS)(
      'refuses a tools/call with a token in %s (JSON-RPC MCP_TOKEN_PASSTHROUGH), forwarding nothing',
      async (_name, meta, location) => {
        const before = seen(fixture.upstream);
        const answer = await callWithMeta(meta, 'denied');
        const row = await expectProxyDeny(answer, 'MCP_TOKEN_PASSTHROUGH', 'denied');
        expect(answer.body.error.message).toContain(`(${location})`);
        expect(JSON.stringify(answer.body)).not.toContain(SECRET);
        expect(JSON.stringify(row.metadata)).not.toContain(SECRET);
        expect(seen(fixture.upstream)).toEqual(before);
      },
    );

    it('refuses the same token on every other request, initialize included', async () => {
      const before = seen(fixture.upstream);
      const meta = { headers: { authorization: `Bearer ${SECRET}` } };
      for (const method of ['ping', 'resources/list', 'prompts/list']) {
        const answer = await mcpFetch(fixture.proxyUrl, {
          body: { jsonrpc: '2.0', id: method, method, params: { _meta: meta } },
          headers: session,
        });
        await expectProxyDeny(answer, 'MCP_TOKEN_PASSTHROUGH', method);
      }
      const init = initializeMessage('init');
      const opened = await mcpFetch(fixture.proxyUrl, {
        body: { ...init, params: { ...init.params, _meta: meta } },
        headers: apiKeyHeaders(fixture.gateway.tenant.key, agentId),
      });
      await expectProxyDeny(opened, 'MCP_TOKEN_PASSTHROUGH', 'init');
      expect(opened.headers.get('mcp-session-id')).toBeNull();
      expect(seen(fixture.upstream)).toEqual(before);
    });

    it('drops a notification carrying a token (202) and audits it, relaying nothing', async () => {
      const before = seen(fixture.upstream);
      const answer = await mcpFetch(fixture.proxyUrl, {
        body: {
          jsonrpc: '2.0',
          method: 'notifications/roots/list_changed',
          params: { _meta: { cookie: SECRET } },
        },
        headers: session,
      });
      expect(answer.status).toBe(202);
      // Notifications are relayed (or dropped) before the 202: nothing is on its way.
      expect(seen(fixture.upstream)).toEqual(before);
      const rows = await fixture.gateway.db.query<{ metadata: unknown }>(
        `select metadata from audit_entries where "tenantId" = $1 and action = 'inspect.deny'
           order by "createdAt" desc limit 1`,
        [fixture.gateway.tenant.id],
      );
      const metadata = JSON.stringify(rows[0]?.metadata);
      expect(metadata).toContain('MCP_TOKEN_PASSTHROUGH');
      expect(metadata).toContain('notification.params._meta.cookie');
      expect(metadata).not.toContain(SECRET);
    });

    it('refuses a _meta deeper than 16 levels (JSON-RPC MCP_META_TOO_LARGE), forwarding nothing', async () => {
      const before = seen(fixture.upstream);
      const answer = await callWithMeta(nestedMeta(17), 'deep');
      await expectProxyDeny(answer, 'MCP_META_TOO_LARGE', 'deep');
      expect(seen(fixture.upstream)).toEqual(before);
    });

    it('forwards what MCP itself puts in _meta (progressToken, related-task)', async () => {
      const calls = fixture.upstream.calls.get('echo') ?? 0;
      const answer = await callWithMeta(MCP_OWN_META, 'ok-2');
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: 'ok-2',
        result: { structuredContent: { text: 'hello' } },
      });
      expect(fixture.upstream.calls.get('echo')).toBe(calls + 1);
    });
  });
});
