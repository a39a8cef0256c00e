// The kill switch and the MCP proxy (issue 14 item 8): an agent's call in flight at the upstream
// (its `block` tool answers only when cancelled) when POST /api/v2/infrastructure/agents/{key}/kill
// arrives. The call ends at once with a JSON-RPC error MCP_UPSTREAM_ABORTED, the upstream sees its
// connection close and its session deleted, the agent's proxy session answers 403 AGENT_REVOKED from then on, and a new
// initialize is refused with AGENT_REVOKED, audited as a refusal (auth.refused). Another agent's session is untouched.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { generateEd25519KeyMaterial } from '../../shared/agentiam/ed25519-keys.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { describeEachDatabase } from '../support/databases.js';
import { postAsClient } from '../support/gateway.js';
import { type ProxyFixture, startProxyFixture } from './support.js';
import {
  apiKeyHeaders,
  expectRefusal,
  initializeMessage,
  mcpFetch,
  openRawSession,
  toolsCall,
  toolsList,
} from './transport-support.js';

describeEachDatabase('MCP proxy and the kill switch', (kind) => {
  let fixture: ProxyFixture;
  let killKey: string;

  beforeAll(async () => {
    fixture = await startProxyFixture(kind, { blockTool: true });
    killKey = await fixture.gateway.addApiKey(fixture.gateway.tenant.id, ['agents:kill']);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  /** An agent with a real Ed25519 key (the kill switch names agents by their public key). */
  const addKeyedAgent = async () => {
    const { gateway } = fixture;
    const key = generateEd25519KeyMaterial();
    const { id } = await createAgent(gateway.db, {
      tenantId: gateway.tenant.id,
      name: `kill-${randomBytes(3).toString('hex')}`,
      allowedTools: ['*'],
      publicKey: key.publicKeyMultibase,
    });
    await gateway.sync();
    return { id, publicKey: key.publicKeyMultibase };
  };

  it('aborts the in-flight call, closes the upstream connection and the session, refuses a new one', async () => {
    const { gateway, upstream, proxyUrl } = fixture;
    const victim = await addKeyedAgent();
    const bystander = await addKeyedAgent();
    const victimAuth = apiKeyHeaders(gateway.tenant.key, victim.id);
    const { headers } = await openRawSession(proxyUrl, victimAuth);
    const other = await openRawSession(proxyUrl, apiKeyHeaders(gateway.tenant.key, bystander.id));
    const upstreamSessionsBefore = upstream.liveSessions.length;

    const blocks = upstream.calls.get('block') ?? 0;
    const closedBefore = upstream.closedByClient;
    const inFlight = mcpFetch(proxyUrl, { body: toolsCall('block', {}, 'in-flight'), headers });
    await upstream.waitForCalls('block', blocks + 1);

    const killed = await postAsClient(
      `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(victim.publicKey)}/kill`,
      { reason: 'proxy kill test' },
      { key: killKey },
    );
    const kill = (await killed.json()) as Record<string, unknown>;
    expect(killed.status, JSON.stringify(kill)).toBe(200);

    // The call in flight ends with the abort, as a JSON-RPC error on its own stream.
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      id: 'in-flight',
      error: {
        message: expect.stringMatching(/^MCP_UPSTREAM_ABORTED/),
        data: { reasonCode: 'MCP_UPSTREAM_ABORTED' },
      },
    });
    expect(answer.body.result).toBeUndefined();
    // The upstream saw its request's connection close, and its session deleted.
    await upstream.waitForClosedByClient(closedBefore + 1);
    await expect.poll(() => upstream.liveSessions.length).toBe(upstreamSessionsBefore - 1);
    expect(upstream.log.some((entry) => entry.httpMethod === 'DELETE')).toBe(true);

    // The session is closed: every later call on it answers 403 AGENT_REVOKED (not an unknown
    // session, which would invite a new one), audited as a refusal; a new one is refused, audited.
    const requestsBefore = upstream.log.length;
    for (const body of [toolsList(), toolsCall('echo', { text: 'after' })]) {
      const refused = await mcpFetch(proxyUrl, { body, headers });
      expectRefusal(refused, 403, 'AGENT_REVOKED');
    }
    // Another agent presenting the killed session's id learns nothing: 404 as for any unknown id.
    expectRefusal(
      await mcpFetch(proxyUrl, {
        body: toolsList(),
        headers: { ...headers, ...apiKeyHeaders(gateway.tenant.key, bystander.id) },
      }),
      404,
      'MCP_SESSION_NOT_FOUND',
    );
    const reopened = await mcpFetch(proxyUrl, { body: initializeMessage(7), headers: victimAuth });
    expect(reopened.status).toBe(200);
    expect(reopened.headers.get('mcp-session-id')).toBeNull();
    expect(reopened.body).toMatchObject({
      id: 7,
      error: { code: -32001, data: { reasonCode: 'AGENT_REVOKED' } },
    });
    // The first refusal of the minute is its own `auth.refused` entry; the rest are counted.
    const refusals = await gateway.db.query<{ id: string }>(
      `select id from audit_entries where action = 'auth.refused' and "resourceId" = $1`,
      [victim.id],
    );
    expect(refusals).toHaveLength(1);
    const audit = await findAuditEntry(gateway.db, refusals[0]!.id);
    expect(audit).toMatchObject({
      tenantId: gateway.tenant.id,
      action: 'auth.refused',
      metadata: { reasonCode: 'AGENT_REVOKED', route: 'POST /mcp/:serverId' },
    });
    expect(upstream.log.length).toBe(requestsBefore);

    // Another agent's session on the same server is untouched.
    const echoed = await mcpFetch(proxyUrl, {
      body: toolsCall('echo', { text: 'still here' }),
      headers: other.headers,
    });
    expect(echoed.body).toMatchObject({ result: { structuredContent: { text: 'still here' } } });
  });
});
