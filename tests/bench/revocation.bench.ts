// Revocations between data planes (issue 23 item 6; measured against DESIGN.md §10's kill budget:
// every data plane refuses within 50 ms, p99, of the answer). One `agent-gateway control-plane`
// and three `agent-gateway data-plane` processes, started by the real CLI with their defaults
// (logging included), on PostgreSQL (DATABASE_URL; skipped without it). One OAuth client; 100
// times: a token is issued by dp-1, checked live on dp-2 and dp-3, revoked at dp-1 (RFC 7009),
// and introspected on dp-2 and dp-3 back to back until each answers `active: false`.
//   - revocation answer → refused on both others (the fast path: the `revocation.committed`
//     event on PostgreSQL's bus);
//   - the reference of the same run: the same two introspections just before the revocation.
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import {
  type DataPlaneProcess,
  startSplitDeployment,
} from '../control-plane/kill-propagation-support.js';
import { basic } from '../data-plane/oauth/oauth-fixture.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { postgresUrl } from '../support/databases.js';
import { latencyRow, percentile } from './measure.js';
import type { BenchContext } from './run.js';

const REVOCATIONS = 100;
const WARMUP = 3;
const BUDGET_P99_MS = 50;

const ms = (value: number) => value.toFixed(1);

export default async function revocation(ctx: BenchContext): Promise<void> {
  if (!postgresUrl) {
    ctx.progress('DATABASE_URL is not set: revocation propagation SKIPPED (needs PostgreSQL)');
    return;
  }
  ctx.progress('starting 1 control plane and 3 data planes (agent-gateway CLI)');
  const d = await startSplitDeployment({ count: 3, direct: true });
  try {
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['files'] }, 'bench');
    const { id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'bench-token-holder',
      allowedTools: ['*'],
      mcpAudiences: ['mcp://files'],
      publicKey: newAgentPublicKey(),
    });
    // Registered as an operator does: GraphQL at the control plane.
    const registered = await fetch(`${d.controlPlane.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify({
        query: `mutation ($input: RegisterOAuthClientInput!) {
          registerOAuthClient(input: $input) { client { id } clientSecret }
        }`,
        variables: { input: { agentId } },
      }),
    });
    const { data } = (await registered.json()) as {
      data: { registerOAuthClient: { client: { id: string }; clientSecret: string } };
    };
    const { client, clientSecret } = data.registerOAuthClient;
    const authorization = basic(client.id, clientSecret);
    const form = (url: string, params: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        body: new URLSearchParams(params).toString(),
      });
    const issue = async (): Promise<string | undefined> => {
      const response = await form(`${d.dataPlanes[0]?.url}/oauth/token`, {
        grant_type: 'client_credentials',
        resource: 'mcp://files',
      });
      if (response.status !== 200) return undefined;
      return ((await response.json()) as { access_token: string }).access_token;
    };
    const active = async (plane: DataPlaneProcess, token: string): Promise<boolean> => {
      const response = await form(`${plane.url}/oauth/introspect`, { token });
      if (response.status !== 200) throw new Error(`${plane.name} answered ${response.status}`);
      return ((await response.json()) as { active: boolean }).active;
    };
    const [dp1, ...others] = d.dataPlanes as [DataPlaneProcess, ...DataPlaneProcess[]];
    // The client reaches every data plane with the snapshot that carries it.
    const deadline = Date.now() + 120_000;
    let token = await issue();
    while (
      token === undefined ||
      !(await Promise.all(others.map((p) => active(p, token!)))).every(Boolean)
    ) {
      if (Date.now() > deadline) throw new Error('the data planes never served the client');
      await new Promise((resolve) => setTimeout(resolve, 50));
      token ??= await issue();
    }
    ctx.progress(`every data plane serves the client; revoking ${REVOCATIONS} tokens at dp-1`);

    const referenceMs: number[] = [];
    const everywhereMs: number[] = [];
    const requestMs: number[] = [];
    for (let i = 0; i < WARMUP + REVOCATIONS; i++) {
      const current = await issue();
      if (current === undefined) throw new Error('dp-1 issued no token');
      const referenceStarted = performance.now();
      const live = await Promise.all(others.map((plane) => active(plane, current)));
      if (!live.every(Boolean)) throw new Error('a fresh token was not active everywhere');
      const reference = performance.now() - referenceStarted;
      const started = performance.now();
      const revoked = await form(`${dp1.url}/oauth/revoke`, { token: current });
      const answered = performance.now();
      if (revoked.status !== 200) throw new Error(`revocation answered ${revoked.status}`);
      const refusedAt = await Promise.all(
        others.map(async (plane) => {
          while (await active(plane, current)) {
            if (performance.now() - answered > 30_000) {
              throw new Error(`${plane.name} still accepts a revoked token after 30 s`);
            }
          }
          return performance.now();
        }),
      );
      if (i < WARMUP) continue;
      referenceMs.push(reference);
      requestMs.push(answered - started);
      everywhereMs.push(Math.max(...refusedAt) - answered);
    }
    const p99 = percentile(everywhereMs, 99);
    ctx.report(`token revoked at dp-1 → refused by dp-2 and dp-3 (${REVOCATIONS} tokens)`, [
      latencyRow('revocation answer → refused by both others (budget p99 ≤ 50 ms)', everywhereMs),
      latencyRow('reference: introspection answered by both, token live', referenceMs),
      latencyRow('revocation request (RFC 7009, until the answer)', requestMs),
    ]);
    ctx.report('revocation propagation budget', [
      {
        measure: 'answer → refused everywhere, p99',
        value: `${ms(p99)} ms`,
        budget: `≤ ${BUDGET_P99_MS} ms`,
        verdict: p99 <= BUDGET_P99_MS ? 'within budget' : 'OVER BUDGET',
      },
    ]);
  } finally {
    await d.close();
  }
}
