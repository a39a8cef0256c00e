// The quickstart's tenant setup, the scripted twin of two console steps: register the MCP server
// (and trust it), then publish and pin a policy with one deny and one approval rule.
//
//   node client/examples/quickstart/setup.mjs
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ADMIN_KEY_FILE (default
// ./data/admin-api-key), QUICKSTART_SERVER_URL (default http://127.0.0.1:3001/mcp).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const keyFile =
  process.env.ADMIN_KEY_FILE ?? join(process.env.AGENT_GATEWAY_DATA_DIR ?? 'data', 'admin-api-key');
const adminKey = (await readFile(keyFile, 'utf8')).trim();
const serverUrl = process.env.QUICKSTART_SERVER_URL ?? 'http://127.0.0.1:3001/mcp';

const QUICKSTART_POLICY = `version: "1.0.0"
policyName: quickstart-guard
targetAgents: ["*"]
rules:
  - ruleId: no_customer_exports
    action: BLOCK
    condition: tool.name == 'export_customers'
    alertSeverity: CRITICAL
  - ruleId: large_payments_need_a_human
    action: REQUIRE_HUMAN
    condition: tool.name == 'send_payment' && args.amount > 100
    alertSeverity: MEDIUM
`;

async function graphql(query, variables = {}) {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const answer = await response.json();
  if (answer.errors) throw new Error(`GraphQL: ${JSON.stringify(answer.errors)}`);
  return answer.data;
}

const server = await graphql(
  'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { serverId toolsRefreshedAt } }',
  { i: { serverId: 'quickstart', url: serverUrl } },
);
console.log(`registered MCP server quickstart -> ${serverUrl}`);
if (!server.registerMcpServer.toolsRefreshedAt) {
  console.log(
    '  (its tools/list was not read yet: is `node client/examples/quickstart/server.mjs` running?)',
  );
}
const { gatewayPolicy } = await graphql('{ gatewayPolicy { trustedServers } }');
if (!gatewayPolicy.trustedServers.includes('quickstart')) {
  await graphql(
    'mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }',
    { i: { trustedServers: [...gatewayPolicy.trustedServers, 'quickstart'] } },
  );
}
const published = await graphql(
  `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
     __typename ... on MutationPublishNplPolicySuccess { data { uri } } } }`,
  { i: { source: QUICKSTART_POLICY } },
);
if (!published.publishNplPolicy.data) {
  throw new Error(`publish: ${JSON.stringify(published.publishNplPolicy)}`);
}
const { uri } = published.publishNplPolicy.data;
await graphql('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri });
console.log(
  `published and pinned ${uri}: export_customers is denied, send_payment > 100 waits for a human`,
);
