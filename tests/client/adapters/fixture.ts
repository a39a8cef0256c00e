// What every adapter test runs against: a real gateway over loopback HTTP with a pinned NPL policy
// (export_customers is blocked, a wire_transfer over 10 000 is held for a human), agents with real
// Ed25519 keys (the kill route names an agent by its key), a test approver that sees the held
// call on the GraphQL approvalQueue subscription and approves it with the approveApproval
// mutation, and the operator's REST kill.
import { createGatewayClient, type GatewayClient } from '../../../client/src/index.js';
import { createAgent } from '../../../control-plane/services/agents.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { type Approver, startApprover } from '../../support/approver.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

export const SERVER_ID = 'files';
export const MCP_SERVER_ID = 'crm';

/** The pinned policy: one BLOCK rule and one REQUIRE_HUMAN rule. */
export const ADAPTER_POLICY = `version: "1.0.0"
policyName: adapter-guard
targetAgents: ["*"]
rules:
  - ruleId: block_export
    action: BLOCK
    condition: "tool.name == 'export_customers'"
    alertSeverity: CRITICAL
  - ruleId: human_large_transfer
    action: REQUIRE_HUMAN
    condition: "tool.name == 'wire_transfer' && args.amount > 10000"
    alertSeverity: MEDIUM
`;

export interface TestAgent {
  readonly client: GatewayClient;
  readonly agentId: string;
  readonly publicKey: string;
}

export interface AdapterFixture {
  readonly gateway: TestGateway;
  readonly policyUri: string;
  /** A new agent (default: allowed every tool) and its gateway client. */
  newAgent(options?: { allowedTools?: string[] }): Promise<TestAgent>;
  /**
   * Starts a test approver for `agentId` and resolves once its subscription is live on the
   * gateway; it approves (or rejects) the first held call it sees and resolves `approved` (the
   * name kept for both) with its id.
   */
  approver(
    agentId: string,
    decision?: 'approve' | 'reject',
  ): Promise<{ approved: Promise<string> }>;
  /** The operator's kill: POST /api/v2/infrastructure/agents/{publicKey}/kill. */
  kill(publicKey: string): Promise<void>;
  /** Registers an MCP server under MCP_SERVER_ID at `url` and trusts it. */
  registerMcpServer(url: string): Promise<void>;
  close(): Promise<void>;
}

export async function startAdapterFixture(): Promise<AdapterFixture> {
  const gateway = await startTestGateway('pglite');
  const tenant = gateway.tenant;
  const admin = await gateway.addApiKey(tenant.id, [...ALL_SCOPES]);
  const policyUri = await gateway.publishPolicy(tenant.id, ADAPTER_POLICY);
  await gateway.registerServer({
    tenantId: tenant.id,
    serverId: SERVER_ID,
    url: 'http://127.0.0.1:9/mcp',
  });
  await gateway.setPolicy(tenant.id, { trustedServers: [SERVER_ID], pinnedPolicies: [policyUri] });
  const approvers: Approver[] = [];

  return {
    gateway,
    policyUri,
    async newAgent(options = {}) {
      const publicKey = newAgentPublicKey();
      const { id } = await createAgent(gateway.db, {
        tenantId: tenant.id,
        name: `adapter-agent-${publicKey.slice(-6)}`,
        role: 'agent',
        allowedTools: options.allowedTools ?? ['*'],
        publicKey,
      });
      await gateway.sync();
      const client = createGatewayClient({
        tenantId: tenant.id,
        agentId: id,
        apiKey: tenant.key,
        baseUrl: gateway.url,
        policy: policyUri,
        serverId: SERVER_ID,
      });
      return { client, agentId: id, publicKey };
    },
    async approver(agentId, decision = 'approve') {
      const started = await startApprover(gateway, admin, agentId, decision);
      approvers.push(started);
      return { approved: started.decided };
    },
    async kill(publicKey) {
      const response = await fetch(
        `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(publicKey)}/kill`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ reason: 'adapter test: operator kill' }),
        },
      );
      if (response.status !== 200) {
        throw new Error(`kill answered ${response.status}: ${await response.text()}`);
      }
    },
    async registerMcpServer(url) {
      await gateway.registerServer({ tenantId: tenant.id, serverId: MCP_SERVER_ID, url });
      await gateway.setPolicy(tenant.id, {
        trustedServers: [SERVER_ID, MCP_SERVER_ID],
        pinnedPolicies: [policyUri],
      });
    },
    async close() {
      await Promise.all(approvers.map((started) => started.dispose()));
      await gateway.close();
    },
  };
}
