// A held MCP 2026-07-28 call across a split deployment (issue 28, §1): one `agent-gateway
// control-plane` and two `agent-gateway data-plane` processes (the real CLI) sharing one
// AGENT_GATEWAY_MASTER_KEY. The call is held on dp-1, whose InputRequiredResult carries the
// gateway's requestState; the operator approves on the control plane; the client's retry lands on
// dp-2, which verifies the requestState with the key it derived from the same master key, and gets
// the upstream's result (one upstream call). A data plane started with another master key refuses
// that requestState (MCP_REQUEST_STATE_INVALID), forwarding nothing. Skipped without DATABASE_URL.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { publishPolicyVersion } from '../../control-plane/services/npl-policies.js';
import { HOLD_ECHO_POLICY } from '../mcp-proxy/support.js';
import { apiKeyHeaders, mcpFetch } from '../mcp-proxy/transport-support.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { killCliProcesses } from '../support/cli-process.js';
import { postgresUrl } from '../support/databases.js';
import {
  type StatelessTestUpstream,
  startStatelessUpstream,
} from '../support/stateless-upstream.js';
import { until } from '../support/until.js';
import { type SplitDeployment, startSplitDeployment } from './kill-propagation-support.js';

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: the split held-call test is SKIPPED (needs PostgreSQL).');
}

const VERSION = '2026-07-28';

function echo(id: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: { text },
      ...extra,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'split-client', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
      },
    },
  };
}

(postgresUrl ? describe.sequential : describe.skip)('a held call across data planes', () => {
  let d: SplitDeployment;
  let upstream: StatelessTestUpstream;
  let agentId: string;
  const masterKey = randomBytes(32).toString('base64url');

  beforeAll(async () => {
    upstream = await startStatelessUpstream();
    d = await startSplitDeployment({ count: 2, env: { AGENT_GATEWAY_MASTER_KEY: masterKey } });
    await registerMcpServer(d.db, { tenantId: d.tenantId, serverId: 'modern', url: upstream.url });
    const { uri } = await publishPolicyVersion(d.db, {
      tenantId: d.tenantId,
      source: HOLD_ECHO_POLICY,
    });
    await updateGatewayPolicy(
      d.db,
      d.tenantId,
      { trustedServers: ['modern'], pinnedPolicies: [uri] },
      'test',
    );
    ({ id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'split-held',
      role: 'agent',
      allowedTools: ['echo'],
      publicKey: newAgentPublicKey(),
    }));
    // Both data planes serve the agent, the server and the policy (a plain call passes).
    for (const plane of d.dataPlanes) {
      await until(
        () => send(plane.url, echo('probe', 'plain')),
        (answer) => answer.body?.result?.content?.[0]?.text === 'plain',
        `${plane.name} serves the agent`,
      );
    }
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await upstream?.close();
    await killCliProcesses();
  }, 60_000);

  function send(planeUrl: string, body: ReturnType<typeof echo>) {
    return mcpFetch(`${planeUrl}/mcp/modern`, {
      body,
      headers: {
        ...apiKeyHeaders(d.adminKey, agentId),
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
      },
    });
  }

  it('held on dp-1, approved on the control plane, the retry on dp-2 gets the result', async () => {
    const [dp1, dp2] = d.dataPlanes;
    const calls = () =>
      upstream.log.filter(
        (r) => r.method === 'tools/call' && r.body.params.arguments.text === 'needs-human',
      ).length;
    const held = await send(dp1!.url, echo('s1', 'needs-human'));
    expect(held.body.result).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^ags1\./),
    });
    const { requestState, _meta } = held.body.result;
    const approvalId: string = _meta['dev.agent-gateway/approvalId'];
    expect(held.body.result.inputRequests['agent-gateway-approval'].params.url).toMatch(
      new RegExp(`/console/approvals/${approvalId}$`),
    );

    const decided = await fetch(`${d.controlPlane.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify({
        query: 'mutation($id: ID!) { approveApproval(id: $id) { status } }',
        variables: { id: approvalId },
      }),
    });
    expect(await decided.json()).toEqual({ data: { approveApproval: { status: 'APPROVED' } } });

    const retried = await send(dp2!.url, echo('s2', 'needs-human', { requestState }));
    expect(retried.body).toEqual({
      jsonrpc: '2.0',
      id: 's2',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'needs-human' }] },
    });
    expect(calls()).toBe(1);
  });

  it('a data plane with another master key refuses the requestState, forwarding nothing', async () => {
    const dp2 = d.dataPlanes[1]!;
    const held = await send(d.dataPlanes[0]!.url, echo('k1', 'needs-human'));
    const { requestState } = held.body.result;
    await d.stopDataPlane(dp2);
    await d.startDataPlane(dp2, {
      env: { AGENT_GATEWAY_MASTER_KEY: randomBytes(32).toString('base64url') },
    });
    const before = upstream.log.length;
    const refused = await send(dp2.url, echo('k2', 'needs-human', { requestState }));
    expect(refused.body.error).toMatchObject({
      code: -32001,
      data: { reasonCode: 'MCP_REQUEST_STATE_INVALID' },
    });
    expect(upstream.log.length).toBe(before);
  });
});
