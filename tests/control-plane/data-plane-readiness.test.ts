// When a remote data plane may decide (docs/config-push.md, "Revocation", "Start-up",
// "Staleness"; issue 23, items 1 and 2): one `agent-gateway control-plane` and three
// `agent-gateway data-plane` processes on one PostgreSQL schema, each data plane behind a TCP
// proxy the test controls, heartbeats of one second (AGENT_GATEWAY_STREAM_HEARTBEAT_MS).
//
// - A revoked data plane stops deciding: /readyz 503, inspect 503 DATA_PLANE_REVOKED (audited as
//   a refusal, nothing decided), one log line however often its retries are refused.
// - A data plane restarted after the policy was tightened while it was down refuses requests
//   (503 DATA_PLANE_NOT_READY) until the current configuration is in, then decides on it: its
//   persisted, looser snapshot never decides.
// - With the control plane stopped, a restarted data plane serves its persisted snapshot after the
//   start-up bound and says so with the version; once the stream has been silent for three
//   heartbeats it is out of service (/readyz 503, the staleness metrics) but keeps deciding on
//   that snapshot (the chosen behaviour: kills still reach it through the database).
// Skipped without DATABASE_URL (the planes need PostgreSQL to run apart).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { killCliProcesses, runCliToEnd } from '../support/cli-process.js';
import { postgresUrl } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { until } from '../support/until.js';
import {
  type BlockingUpstream,
  type DataPlaneProcess,
  type SplitDeployment,
  startBlockingUpstream,
  startSplitDeployment,
} from './kill-propagation-support.js';

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: data-plane readiness tests are SKIPPED (PostgreSQL).');
}

const HEARTBEAT_MS = 1000;
const REVOKED_LINE =
  'control plane refused the data-plane credential: revoked; refusing every governed request';

(postgresUrl ? describe.sequential : describe.skip)('when a remote data plane decides', () => {
  let upstream: BlockingUpstream;
  let d: SplitDeployment;
  let agentId: string;
  let dp1: DataPlaneProcess;
  let dp2: DataPlaneProcess;
  let dp3: DataPlaneProcess;

  beforeAll(async () => {
    upstream = await startBlockingUpstream();
    d = await startSplitDeployment({
      count: 3,
      env: { AGENT_GATEWAY_STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS) },
    });
    [dp1, dp2, dp3] = d.dataPlanes as [DataPlaneProcess, DataPlaneProcess, DataPlaneProcess];
    await registerMcpServer(d.db, { tenantId: d.tenantId, serverId: 'tools', url: upstream.url });
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['tools'] }, 'test');
    ({ id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'readiness-agent',
      role: 'agent',
      allowedTools: ['*'],
      publicKey: newAgentPublicKey(),
    }));
    for (const plane of d.dataPlanes) {
      await until(
        () => inspect(plane),
        (r) => r.status === 200,
        `${plane.name} serves the agent`,
      );
    }
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await upstream?.close();
    await killCliProcesses();
  }, 60_000);

  const inspect = async (
    plane: DataPlaneProcess,
  ): Promise<{ status: number; reasonCode?: string; decision?: string }> => {
    const response = await fetch(`${plane.url}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify(
        inspectBody(agentId, { server: 'tools', tool: 'echo', args: {}, mode: 'production' }),
      ),
    });
    const body = (await response.json()) as { reasonCode?: string; decision?: string };
    return {
      status: response.status,
      ...(body.reasonCode ? { reasonCode: body.reasonCode } : {}),
      ...(body.decision ? { decision: body.decision } : {}),
    };
  };
  const readyz = async (plane: DataPlaneProcess) => {
    const response = await fetch(`${plane.url}/readyz`);
    const body = (await response.json()) as { reason?: string };
    return { ...body, status: response.status };
  };
  const metric = async (plane: DataPlaneProcess, name: string): Promise<number> => {
    const text = await (await fetch(`${plane.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1]);
  };
  const logCount = (plane: DataPlaneProcess, message: string) =>
    plane.cli.stdout.filter((l) => l.includes(`"msg":"${message}"`)).length;
  const auditActions = async (since: Date) =>
    (
      await d.db.query<{ action: string; reasonCode: string | null }>(
        `select action, metadata->>'reasonCode' as "reasonCode" from audit_entries
         where "tenantId" = $1 and "createdAt" >= $2 order by seq`,
        [d.tenantId, since],
      )
    ).map((row) => `${row.action}:${row.reasonCode ?? ''}`);

  it('a revoked data plane refuses every governed request within a heartbeat and says so once', async () => {
    expect(await readyz(dp2)).toMatchObject({ status: 200 });
    const revokedAt = new Date();
    const revoke = await runCliToEnd(['data-plane', 'revoke', '--name', dp2.name], {
      DATABASE_URL: postgresUrl,
      AGENT_GATEWAY_DB_SCHEMA: d.schema,
    });
    expect(revoke.code, revoke.stderr.join('\n')).toBe(0);
    const started = performance.now();
    const out = await until(
      () => readyz(dp2),
      (r) => r.status === 503,
      'dp-2 out of service',
      30_000,
    );
    // The sweep runs every heartbeat; the refused reconnection follows within a backoff step.
    expect(performance.now() - started).toBeLessThan(5 * HEARTBEAT_MS + 2000);
    expect(out.reason).toMatch(/^revoked/);

    const refused = await inspect(dp2);
    expect(refused).toEqual({ status: 503, reasonCode: 'DATA_PLANE_REVOKED' });
    // A kill is governed too: a revoked data plane is no longer part of the fleet.
    const kill = await fetch(
      `${dp2.url}/api/v2/infrastructure/agents/${newAgentPublicKey()}/kill`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
        body: JSON.stringify({ reason: 'test' }),
      },
    );
    expect(kill.status).toBe(503);
    expect(((await kill.json()) as { reasonCode: string }).reasonCode).toBe('DATA_PLANE_REVOKED');
    expect(await metric(dp2, 'agent_gateway_data_plane_revoked')).toBe(1);
    // The other data planes decide as before.
    expect(await inspect(dp1)).toMatchObject({ status: 200, decision: 'allow' });

    // The refusal is audited (bounded, as a refusal of the API key); nothing was decided.
    const actions = await until(
      () => auditActions(revokedAt),
      (list) => Array.isArray(list) && list.includes('auth.refused:DATA_PLANE_REVOKED'),
      'the refusal audited',
    );
    expect(actions.filter((a) => a.startsWith('inspect.'))).toEqual([]);

    // Retries keep being refused (several backoff steps, the control plane silent for over two
    // heartbeats): still one log line.
    await until(
      () => metric(dp2, 'agent_gateway_snapshot_age_seconds'),
      (age) => age > (2 * HEARTBEAT_MS) / 1000,
      'several refused retries',
      30_000,
    );
    expect(await inspect(dp2)).toEqual({ status: 503, reasonCode: 'DATA_PLANE_REVOKED' });
    expect(logCount(dp2, REVOKED_LINE)).toBe(1);
  }, 60_000);

  it('a restarted data plane decides nothing before the current policy is in, then decides on it', async () => {
    await d.stopDataPlane(dp1);
    // Tightened while dp-1 is down: its persisted snapshot still allows echo.
    await updateGatewayPolicy(
      d.db,
      d.tenantId,
      { trustedServers: ['tools'], blockedTools: ['echo'] },
      'test',
    );
    await until(
      () => inspect(dp3),
      (r) => r.status === 403,
      'the control plane publishes the tightened policy',
      30_000,
    );
    // The control plane cannot be reached yet: dp-1 listens but must not decide.
    dp1.proxy.cut();
    await d.startDataPlane(dp1, {
      env: { AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS: '120000' },
      until: 'listening',
    });
    expect(await inspect(dp1)).toEqual({ status: 503, reasonCode: 'DATA_PLANE_NOT_READY' });
    expect(await readyz(dp1)).toMatchObject({ status: 503 });
    dp1.proxy.restore();
    await dp1.cli.waitForLog('ready', 60_000);
    // The first request after ready is decided on the tightened policy.
    expect(await inspect(dp1)).toMatchObject({ status: 403, decision: 'deny' });
    expect(await readyz(dp1)).toMatchObject({ status: 200 });
    expect(logCount(dp1, 'control plane not reached in time: serving the persisted snapshot')).toBe(
      0,
    );
  }, 120_000);

  it('with the control plane stopped, serves the persisted snapshot after the bound; stale: out of service, still deciding', async () => {
    // What dp-1 serves is persisted before it is acknowledged.
    const version = (await dp1.cli.waitForLog('ready')).version as number;
    await until(
      () =>
        d.db.query<{ v: number }>(
          `select "appliedSnapshotVersion" as v from data_planes where name = $1`,
          [dp1.name],
        ),
      (rows) => Array.isArray(rows) && rows[0]?.v === version,
      'dp-1 persisted and acknowledged its snapshot',
    );
    await d.stopDataPlane(dp1);
    d.controlPlane.cli.child.kill('SIGTERM');
    await d.controlPlane.cli.exited;
    await d.startDataPlane(dp1, { env: { AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS: '1000' } });
    const fallback = await dp1.cli.waitForLog(
      'control plane not reached in time: serving the persisted snapshot',
    );
    expect(fallback.version).toBe(version);
    // Decided on the persisted (tightened) snapshot.
    expect(await inspect(dp1)).toMatchObject({ status: 403, decision: 'deny' });
    expect(await metric(dp1, 'agent_gateway_config_stream_connected')).toBe(0);

    // Three silent heartbeats: stale, out of the load balancer, still deciding.
    const stale = await until(
      () => readyz(dp1),
      (r) => r.status === 503,
      'dp-1 stale',
      30_000,
    );
    expect(stale.reason).toMatch(/^stale/);
    expect(await metric(dp1, 'agent_gateway_snapshot_stale')).toBe(1);
    expect(await metric(dp1, 'agent_gateway_snapshot_age_seconds')).toBeGreaterThan(
      (3 * HEARTBEAT_MS) / 1000,
    );
    expect(await inspect(dp1)).toMatchObject({ status: 403, decision: 'deny' });
  }, 120_000);
});
