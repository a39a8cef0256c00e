// What the MCP proxy tests share: a gateway with one registered SDK upstream, and official SDK
// clients connected through /mcp/{serverId}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import type { DatabaseKindUnderTest } from '../support/databases.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  type McpUpstream,
  type McpUpstreamOptions,
  startMcpUpstream,
} from '../support/mcp-upstream.js';

export interface ProxyFixture {
  readonly gateway: TestGateway;
  readonly upstream: McpUpstream;
  readonly serverId: string;
  /** The proxy endpoint of the server. */
  readonly proxyUrl: string;
  close(): Promise<void>;
}

export async function startProxyFixture(
  kind: DatabaseKindUnderTest,
  options: Partial<McpUpstreamOptions> = {},
  gatewayOptions: Parameters<typeof startTestGateway>[1] = {},
): Promise<ProxyFixture> {
  const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true, ...options });
  const gateway = await startTestGateway(kind, gatewayOptions);
  const serverId = 'upstream-1';
  await gateway.setPolicy(gateway.tenant.id, { trustedServers: [serverId] });
  await gateway.registerServer({ tenantId: gateway.tenant.id, serverId, url: upstream.url });
  return {
    gateway,
    upstream,
    serverId,
    proxyUrl: `${gateway.url}/mcp/${serverId}`,
    async close() {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** Holds `echo` called with `text: 'needs-human'` for a human; every other call passes. */
export const HOLD_ECHO_POLICY = `version: "1.0.0"
policyName: proxy-holds
targetAgents: ["*"]
rules:
  - ruleId: human_echo
    action: REQUIRE_HUMAN
    condition: "tool.name == 'echo' && args.text == 'needs-human'"
    alertSeverity: MEDIUM
`;

/**
 * A proxy fixture whose tenant pins HOLD_ECHO_POLICY, and an API key with every scope (to decide
 * the approvals).
 */
export async function startHoldingProxyFixture(
  kind: DatabaseKindUnderTest,
): Promise<{ fixture: ProxyFixture; admin: string }> {
  const fixture = await startProxyFixture(kind);
  const { gateway, serverId } = fixture;
  const admin = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
  const uri = await gateway.publishPolicy(gateway.tenant.id, HOLD_ECHO_POLICY);
  await gateway.setPolicy(gateway.tenant.id, { trustedServers: [serverId], pinnedPolicies: [uri] });
  return { fixture, admin };
}

/** An official SDK client through the proxy, authenticated with an API key and X-Agent-Id. */
export async function connectWithApiKey(
  proxyUrl: string,
  key: string,
  agentId: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(proxyUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}`, 'x-agent-id': agentId, ...headers } },
  });
  await client.connect(transport);
  return client;
}
