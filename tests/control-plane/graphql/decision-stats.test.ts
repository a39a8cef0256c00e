// decisionStats over real HTTP against a real single-process gateway, on both databases: allowed,
// denied and held inspect calls are counted by the data plane's own tally, written before the
// query (no waiting), aggregated per outcome, tool and reason code, inside the caller's tenant;
// malformed requests are denies counted apart as client errors.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { HOLD_POLICY } from '../../support/npl-policies.js';
import { errorCodes, type GraphQLAnswer, graphql, type Loose } from './support.js';

const STATS = `query($w: Int) { decisionStats(windowMinutes: $w) {
  windowMinutes since
  perMinute { minute counts { outcome count } clientErrors }
  totals { outcome count }
  clientErrors
  topDeniedTools { serverId toolName count }
  topReasonCodes { reasonCode count }
  reporters { dataPlaneId name lastReportedAt } } }`;

describeEachDatabase('decisionStats (one process)', (kind) => {
  let gw: TestGateway;
  let admin: string;
  let otherAuditor: string;
  let holdCode: string;
  const q = (query: string, variables?: Record<string, unknown>, key = admin) =>
    graphql<Record<string, Loose>>(gw.url, key, query, variables);

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    const other = await gw.addTenant();
    otherAuditor = await gw.addApiKey(other.id, ['audit:read']);
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { ok: 1 }, write: { ok: 1 } },
    });
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'] });
    const uri = await gw.publishPolicy(gw.tenant.id, HOLD_POLICY);
    expect((await q('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri })).errors).toBe(
      undefined,
    );
    const agent = gw.tenant.agentId;
    for (let i = 0; i < 3; i++) {
      expect((await gw.inspect(inspectBody(agent, { tool: 'echo' }))).status).toBe(200);
    }
    for (const [server, tool] of [
      ['shadow-db', 'drop'],
      ['shadow-db', 'drop'],
      ['mail', 'send'],
    ] as const) {
      const denied = await gw.inspect(inspectBody(agent, { server, tool }));
      expect(denied.body.reasonCode).toBe('MCP_SERVER_NOT_WHITELISTED');
    }
    for (let i = 0; i < 2; i++) {
      const held = await gw.inspect(inspectBody(agent, { tool: 'write', id: i }));
      expect(held.status).toBe(202);
      holdCode = held.body.reasonCode as string;
    }
    // Two malformed requests: denies, and client errors.
    for (const body of [{}, inspectBody(agent, { mode: 'dry-run' })]) {
      const malformed = await gw.inspect(body);
      expect(malformed.status).toBe(400);
      expect(malformed.body.reasonCode).toBe('MCP_MALFORMED_RPC');
    }
  });
  afterAll(() => gw?.close());

  it('counts every decision made before the query, per outcome, tool and reason code', async () => {
    const answer = await q(STATS);
    expect(answer.errors).toBeUndefined();
    const stats = answer.data?.decisionStats;
    expect(stats.windowMinutes).toBe(60);
    expect(stats.totals).toEqual([
      { outcome: 'allow', count: 3 },
      { outcome: 'deny', count: 5 },
      { outcome: 'require_human_approval', count: 2 },
    ]);
    expect(stats.clientErrors).toBe(2);
    expect(stats.topDeniedTools).toEqual([
      { serverId: 'shadow-db', toolName: 'drop', count: 2 },
      { serverId: 'mail', toolName: 'send', count: 1 },
    ]);
    expect(stats.topReasonCodes).toEqual([
      { reasonCode: 'MCP_SERVER_NOT_WHITELISTED', count: 3 },
      { reasonCode: 'MCP_MALFORMED_RPC', count: 2 },
      { reasonCode: holdCode, count: 2 },
    ]);
    // The minutes add up to the totals (the calls may straddle a minute boundary).
    const summed: Record<string, number> = {};
    for (const minute of stats.perMinute) {
      expect(new Date(minute.minute).getTime()).toBeGreaterThanOrEqual(
        new Date(stats.since).getTime(),
      );
      for (const { outcome, count } of minute.counts)
        summed[outcome] = (summed[outcome] ?? 0) + count;
      summed.clientErrors = (summed.clientErrors ?? 0) + minute.clientErrors;
    }
    expect(summed).toEqual({ allow: 3, deny: 5, require_human_approval: 2, clientErrors: 2 });
    expect(stats.reporters).toEqual([
      { dataPlaneId: null, name: 'local', lastReportedAt: expect.any(String) },
    ]);
  });

  it('counts the decisions after the previous query too (each query flushes first)', async () => {
    await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'echo' }));
    const answer = await q(STATS, { w: 5 });
    expect(answer.data?.decisionStats.windowMinutes).toBe(5);
    expect(answer.data?.decisionStats.totals[0]).toEqual({ outcome: 'allow', count: 4 });
  });

  it("another tenant's key sees zeros", async () => {
    const answer = await q(STATS, {}, otherAuditor);
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.decisionStats).toMatchObject({
      perMinute: [],
      totals: [
        { outcome: 'allow', count: 0 },
        { outcome: 'deny', count: 0 },
        { outcome: 'require_human_approval', count: 0 },
      ],
      clientErrors: 0,
      topDeniedTools: [],
      topReasonCodes: [],
      reporters: [],
    });
  });

  it('reads an explicit null window as the default hour', async () => {
    const answer = await q('{ decisionStats(windowMinutes: null) { windowMinutes } }');
    expect(answer.data?.decisionStats.windowMinutes).toBe(60);
  });

  it('needs audit:read', async () => {
    const refused = await q('{ decisionStats { windowMinutes } }', {}, gw.tenant.key);
    expect(errorCodes(refused)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });

  it.each([0, 1441, -5])('refuses a window of %i minutes, naming the field', async (w) => {
    const answer: GraphQLAnswer<unknown> = await q(STATS, { w });
    expect(errorCodes(answer)).toEqual(['REQUEST_INVALID']);
    const issues = answer.errors?.[0]?.extensions?.issues as { field: string }[];
    expect(issues.map((issue) => issue.field)).toEqual(['windowMinutes']);
  });
});
