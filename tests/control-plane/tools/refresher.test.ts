// Tool definitions are learnt from the upstream's tools/list when a server is registered or
// changed (bounded wait, then in the background) and periodically, and the destructive detector
// enforces what was learnt: a tool the upstream annotates destructiveHint: true under a harmless
// name is blocked with denyDestructive, and never reaches the upstream. A server that cannot be
// listed keeps its last known definitions, and the operator sees why on its GraphQL record and
// in the refresh metric. Real gateway, real GraphQL over HTTP, the official MCP SDK as upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolRefresher } from '../../../control-plane/tools/refresher.js';
import { createUpstreamClient, type UpstreamClient } from '../../../data-plane/upstream/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { closedPortUrl, expectDeny, quickDatabaseKind } from '../../data-plane/inspect/support.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { graphql, type Loose } from '../graphql/support.js';

const WAIT_MS = 1_000;
const SERVER_FIELDS =
  'serverId toolAnnotations toolDigests toolsRefreshedAt toolsRefreshError toolsRefreshFailedAt';
const REGISTER = `mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { ${SERVER_FIELDS} } }`;
const SERVERS = `{ mcpServers { ${SERVER_FIELDS} } }`;
const ROTATE_INDEX = { name: 'rotate_index', annotations: { destructiveHint: true } };

describe('tool definitions learnt from the upstream', () => {
  let gw: TestGateway;
  let admin: string;
  let upstream: McpUpstream;
  let release: () => void = () => {};
  let held: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    upstream = await startMcpUpstream({
      responseMode: 'json',
      stateful: true,
      extraTools: [ROTATE_INDEX],
    });
    gw = await startTestGateway(quickDatabaseKind, { toolsListWaitMs: WAIT_MS });
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(async () => {
    release();
    await gw?.close();
    await upstream?.close();
  });

  const register = (serverId: string, url: string) =>
    graphql<Loose>(gw.url, admin, REGISTER, { i: { serverId, url } });
  const serverRecord = async (serverId: string) =>
    (((await graphql<Loose>(gw.url, admin, SERVERS)).data?.mcpServers ?? []) as Loose[]).find(
      (server) => server.serverId === serverId,
    );
  const refreshCount = async (trigger: string, outcome: string) => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((row) =>
        row.startsWith(
          `agent_gateway_tool_refreshes_total{trigger="${trigger}",outcome="${outcome}"}`,
        ),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  const callRotateIndex = (serverId: string) =>
    gw.inspect(
      inspectBody(gw.tenant.agentId, {
        mode: 'production',
        server: serverId,
        tool: 'rotate_index',
        args: {},
      }),
    );

  it('learns destructiveHint at registration: rotate_index is blocked and never forwarded', async () => {
    const answer = await register('search', upstream.url);
    expect(answer.errors).toBeUndefined();
    const server = answer.data.registerMcpServer;
    expect(server.toolAnnotations.rotate_index).toEqual({ destructiveHint: true });
    expect(server.toolAnnotations.drop_table).toEqual({
      destructiveHint: true,
      readOnlyHint: false,
    });
    expect(server.toolDigests.rotate_index).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(server.toolsRefreshedAt).not.toBeNull();
    expect(server.toolsRefreshError).toBeNull();
    expect(await refreshCount('change', 'changed')).toBe(1);

    await gw.setPolicy(gw.tenant.id, { trustedServers: ['search'], denyDestructive: true });
    const requests = upstream.requests;
    const denied = await callRotateIndex('search');
    const audit = await expectDeny(gw, denied, {
      status: 403,
      reasonCode: 'MCP_DESTRUCTIVE_OP_BLOCKED',
      tenantId: gw.tenant.id,
    });
    expect(denied.body.signal).toMatchObject({ kind: 'annotation' });
    expect(audit.metadata.toolName ?? audit.metadata.tool).toBe('rotate_index');
    expect(upstream.requests).toBe(requests);
    expect(upstream.calls.get('rotate_index')).toBeUndefined();
  });

  it('answers a registration whose upstream is down within the bound and shows why', async () => {
    const started = performance.now();
    const answer = await register('down', await closedPortUrl());
    expect(performance.now() - started).toBeLessThan(WAIT_MS + 1_000);
    expect(answer.errors).toBeUndefined();
    const server = answer.data.registerMcpServer;
    expect(server.toolAnnotations).toEqual({});
    expect(server.toolsRefreshedAt).toBeNull();
    expect(server.toolsRefreshError).toMatch(/^MCP_UPSTREAM_ERROR: /);
    expect(server.toolsRefreshFailedAt).not.toBeNull();
    expect(await refreshCount('change', 'failed')).toBe(1);

    // Pointed at a server that answers, it learns and the error is gone.
    const updated = await graphql<Loose>(
      gw.url,
      admin,
      `mutation($s: String!, $i: UpdateMcpServerInput!) { updateMcpServer(serverId: $s, input: $i) { ${SERVER_FIELDS} } }`,
      { s: 'down', i: { url: upstream.url } },
    );
    expect(updated.errors).toBeUndefined();
    expect(updated.data.updateMcpServer).toMatchObject({
      toolAnnotations: { rotate_index: { destructiveHint: true } },
      toolsRefreshError: null,
      toolsRefreshFailedAt: null,
    });
    expect(updated.data.updateMcpServer.toolsRefreshedAt).not.toBeNull();
  });

  it('learns a slow upstream in the background after answering the registration', async () => {
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startMcpUpstream({
      responseMode: 'json',
      stateful: false,
      extraTools: [ROTATE_INDEX],
      holdMethod: { method: 'tools/list', until: () => held },
    });
    try {
      const answer = await register('slow', slow.url);
      expect(answer.errors).toBeUndefined();
      expect(answer.data.registerMcpServer).toMatchObject({
        toolAnnotations: {},
        toolsRefreshedAt: null,
        toolsRefreshError: null,
      });
      await gw.setPolicy(gw.tenant.id, {
        trustedServers: ['search', 'slow'],
        denyDestructive: true,
      });
      release();
      await gw.runtime.toolRefresher.idle();
      const server = await serverRecord('slow');
      expect(server.toolAnnotations.rotate_index).toEqual({ destructiveHint: true });
      expect(server.toolsRefreshedAt).not.toBeNull();
      const requests = slow.requests;
      const denied = await callRotateIndex('slow');
      expect(denied.status).toBe(403);
      expect(denied.body.reasonCode).toBe('MCP_DESTRUCTIVE_OP_BLOCKED');
      expect(slow.requests).toBe(requests);
    } finally {
      await slow.close();
    }
  });

  it('keeps the last known definitions when a periodic refresh fails, and records why', async () => {
    const gone = await startMcpUpstream({
      responseMode: 'json',
      stateful: true,
      extraTools: [ROTATE_INDEX],
    });
    expect((await register('flaky', gone.url)).data.registerMcpServer.toolsRefreshError).toBeNull();
    await gone.close();

    await gw.runtime.toolRefresher.refreshAll();
    const server = await serverRecord('flaky');
    expect(server.toolAnnotations.rotate_index).toEqual({ destructiveHint: true });
    expect(server.toolsRefreshError).toMatch(/^MCP_UPSTREAM_/);
    expect(server.toolsRefreshFailedAt).not.toBeNull();
    expect(await refreshCount('periodic', 'failed')).toBeGreaterThanOrEqual(1);

    await gw.setPolicy(gw.tenant.id, {
      trustedServers: ['search', 'slow', 'flaky'],
      denyDestructive: true,
    });
    const denied = await callRotateIndex('flaky');
    expect(denied.status).toBe(403);
    expect(denied.body.reasonCode).toBe('MCP_DESTRUCTIVE_OP_BLOCKED');
  });
});

describe('the periodic refresh', () => {
  let gw: TestGateway;
  let upstream: McpUpstream;
  let client: UpstreamClient;

  beforeAll(async () => {
    upstream = await startMcpUpstream({
      responseMode: 'sse',
      stateful: true,
      extraTools: [ROTATE_INDEX],
    });
    gw = await startTestGateway(quickDatabaseKind);
    client = createUpstreamClient();
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
    await upstream?.close();
  });

  it('learns every registered server when started, and stops', async () => {
    // Registered through the service: nothing learnt until the refresher runs.
    await gw.registerServer({ tenantId: gw.tenant.id, serverId: 'files', url: upstream.url });
    const before = await gw.db.prisma.mcpServer.findFirstOrThrow({ where: { serverId: 'files' } });
    expect(before.toolAnnotations).toEqual({});

    const outcomes: string[] = [];
    let learnt: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      learnt = resolve;
    });
    const refresher = new ToolRefresher({
      db: gw.db,
      listTools: (target, signal) => client.listToolDefinitions(target, { signal }),
      publish: () => gw.sync(),
      intervalMs: 60_000,
      onOutcome: (trigger, outcome) => {
        outcomes.push(`${trigger}:${outcome}`);
        learnt();
      },
    });
    refresher.start();
    await done;
    await refresher.stop();
    expect(outcomes).toEqual(['periodic:changed']);
    const after = await gw.db.prisma.mcpServer.findFirstOrThrow({ where: { serverId: 'files' } });
    expect(after.toolsRefreshedAt).not.toBeNull();
    expect(
      gw.runtime.store.current?.tenants
        .get(gw.tenant.id)
        ?.servers.get('files')
        ?.toolAnnotations.get('rotate_index'),
    ).toEqual({ destructiveHint: true });
  });
});
