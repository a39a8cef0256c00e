// decisionStats in a split deployment: one `agent-gateway control-plane` and one `agent-gateway
// data-plane` process (the real CLI) on one PostgreSQL schema. The data plane counts its own
// decisions and reports them on the ack endpoint after a heartbeat; the control plane's
// decisionStats then shows them under that data plane. A malformed report is refused (400) and
// writes nothing. A client waiting on the data plane for an approval's decision shows on the
// control plane (Approval.clientWaitingUntil), and stops showing when it leaves. Skipped without
// DATABASE_URL (the planes need PostgreSQL to run apart).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { publishPolicyVersion } from '../../control-plane/services/npl-policies.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { killCliProcesses } from '../support/cli-process.js';
import { postAck } from '../support/config-stream.js';
import { postgresUrl } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { HOLD_POLICY } from '../support/npl-policies.js';
import { until } from '../support/until.js';
import type { Loose } from './graphql/support.js';
import { type SplitDeployment, startSplitDeployment } from './kill-propagation-support.js';

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: split decisionStats tests are SKIPPED (need PostgreSQL).');
}

const STATS = `{ decisionStats(windowMinutes: 10) {
  totals { outcome count }
  topDeniedTools { serverId toolName count }
  reporters { dataPlaneId name } } }`;

(postgresUrl ? describe : describe.skip)('decisionStats across processes', () => {
  let d: SplitDeployment;
  let agentId: string;
  let dataPlaneId: string;
  let credential: string;
  /** What the data plane answered, per decision: the counts it must report. */
  const answered = { allow: 0, deny: 0, require_human_approval: 0 };

  const graphql = async (query: string) => {
    const response = await fetch(`${d.controlPlane.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: Record<string, Loose>; errors?: unknown };
  };
  const inspect = async (server: string, tool: string) => {
    const response = await fetch(`${d.dataPlanes[0]!.url}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify(inspectBody(agentId, { server, tool })),
    });
    const body = (await response.json()) as { decision?: keyof typeof answered };
    if (body.decision) answered[body.decision]++;
    return response.status;
  };
  const ack = (body: unknown) => postAck(d.controlPlane.url, credential, body);

  beforeAll(async () => {
    d = await startSplitDeployment({
      count: 1,
      direct: true,
      env: { AGENT_GATEWAY_STREAM_HEARTBEAT_MS: '300' },
    });
    const [plane] = await d.db.query<{ id: string }>(`select id from data_planes`);
    dataPlaneId = plane!.id;
    credential = (await readFile(d.dataPlanes[0]!.credentialFile, 'utf8')).trim();
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['files'] }, 'test');
    ({ id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'counted',
      role: 'agent',
      allowedTools: ['*'],
      publicKey: newAgentPublicKey(),
    }));
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await killCliProcesses();
  });

  it("a remote data plane's decisions reach the control plane's decisionStats after a heartbeat", async () => {
    // Served once the control plane's poll and the stream brought the setup (every try counted).
    await until(
      () => inspect('files', 'echo'),
      (status) => status === 200,
      'setup served',
    );
    await inspect('files', 'echo');
    await inspect('vault', 'read-secrets');
    await inspect('vault', 'read-secrets');
    const expected = Object.entries(answered).map(([outcome, count]) => ({ outcome, count }));
    expect(answered.deny).toBeGreaterThanOrEqual(2);
    const stats = await until(
      async () => (await graphql(STATS)).data?.decisionStats,
      (value) => JSON.stringify(value?.totals) === JSON.stringify(expected),
      'decisions reported',
    );
    expect(stats.topDeniedTools).toContainEqual({
      serverId: 'vault',
      toolName: 'read-secrets',
      count: 2,
    });
    expect(stats.reporters).toEqual([{ dataPlaneId, name: 'dp-1' }]);
  });

  it('refuses a malformed report with 400 and writes nothing', async () => {
    const row = {
      tenantId: d.tenantId,
      minute: Date.now() - (Date.now() % 60_000),
      outcome: 'deny',
      serverId: 'files',
      toolName: 'bad-report',
      reasonCode: 'MCP_SERVER_NOT_WHITELISTED',
      count: 5,
    };
    for (const body of [
      { decisions: [{ ...row, outcome: 'maybe' }] },
      { decisions: [{ ...row, minute: row.minute + 1 }] },
      { decisions: [{ ...row, count: 0 }] },
      { decisions: [{ ...row, extra: 1 }] },
      { decisions: [row], version: 3 },
      { decisions: 'all of them' },
    ]) {
      const response = await ack(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { reasonCode?: string }).reasonCode).toBe(
        'REQUEST_INVALID',
      );
    }
    const written = await d.db.query(
      `select 1 from decision_counts where "toolName" = 'bad-report'`,
    );
    expect(written).toEqual([]);
    // The same row, well formed, is written under the reporting data plane; an unknown tenant's
    // rows are dropped.
    const accepted = await ack({ decisions: [row, { ...row, tenantId: 'no-such-tenant' }] });
    expect(accepted.status).toBe(200);
    const rows = await d.db.query<{ reporter: string; count: number }>(
      `select reporter, count from decision_counts where "toolName" = 'bad-report'`,
    );
    expect(rows).toEqual([{ reporter: dataPlaneId, count: 5 }]);
  });
  it("a client waiting on the data plane for an approval shows on the control plane's Approval", async () => {
    const { uri } = await publishPolicyVersion(d.db, { tenantId: d.tenantId, source: HOLD_POLICY });
    await updateGatewayPolicy(
      d.db,
      d.tenantId,
      { trustedServers: ['files'], pinnedPolicies: [uri] },
      'test',
    );
    const held = await until(
      () =>
        fetch(`${d.dataPlanes[0]!.url}/api/v1/mcp/gateway/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
          body: JSON.stringify(inspectBody(agentId, { server: 'files', tool: 'write' })),
        }),
      (response) => response.status === 202,
      'the hold policy served',
    );
    const { approval } = (await held.json()) as { approval: { id: string } };
    const waitingUntil = async () =>
      (await graphql(`{ approval(id: "${approval.id}") { clientWaitingUntil } }`)).data?.approval
        .clientWaitingUntil as string | null;
    expect(await waitingUntil()).toBeNull();

    const poll = new AbortController();
    const polled = Date.now();
    const polling = fetch(
      `${d.dataPlanes[0]!.url}/api/v1/mcp/gateway/approvals/${approval.id}?wait=30`,
      { headers: { authorization: `Bearer ${d.adminKey}` }, signal: poll.signal },
    ).catch(() => undefined);
    const until30 = await until(waitingUntil, (value) => value !== null, 'the wait recorded');
    expect(Date.parse(until30 as string)).toBeGreaterThan(polled);
    expect(Date.parse(until30 as string)).toBeLessThanOrEqual(Date.now() + 30_000);

    poll.abort();
    await polling;
    await until(waitingUntil, (value) => value === null, 'the wait ended');
  });
});
