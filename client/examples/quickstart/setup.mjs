// The quickstart's tenant setup, the scripted twin of two console steps: register the MCP server
// (and trust it), then publish and pin a policy with one deny and one approval rule.
//
//   node client/examples/quickstart/setup.mjs
//
// Run it again whenever you like: what is already there and the same is kept (a policy version
// never changes, so publishing the same text again is a no-op). It owns the names `quickstart`
// (the server) and `svc://quickstart-guard@1.0.0` (the policy); no other example uses them.
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ADMIN_KEY_FILE (default
// ./data/admin-api-key), QUICKSTART_PORT (default 3001: the port server.mjs listens on; the
// server is registered as http://127.0.0.1:$QUICKSTART_PORT/mcp).
import { connectAsAdmin, fail, succeeded } from '../gateway-admin.mjs';

const SERVER_ID = 'quickstart';
const port = process.env.QUICKSTART_PORT ?? '3001';
if (!/^[1-9][0-9]{0,4}$/.test(port) || Number(port) > 65535) {
  fail(`QUICKSTART_PORT is not a port: ${port}`);
}
const serverUrl = `http://127.0.0.1:${port}/mcp`;

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

const admin = await connectAsAdmin();
const { mcpServers, gatewayPolicy } = await admin.graphql(
  '{ mcpServers { serverId url toolsRefreshedAt toolsRefreshError } gatewayPolicy { trustedServers } }',
);

// Registered again unless it is already there at this URL with its tools learnt: a registration
// reads the server's tools/list, which is what a server started after an earlier run needs.
let server = mcpServers.find((registered) => registered.serverId === SERVER_ID);
if (server?.url !== serverUrl || !server.toolsRefreshedAt || server.toolsRefreshError) {
  ({ registerMcpServer: server } = await admin.graphql(
    `mutation($i: RegisterMcpServerInput!) {
       registerMcpServer(input: $i) { serverId toolsRefreshedAt toolsRefreshError } }`,
    { i: { serverId: SERVER_ID, url: serverUrl } },
  ));
}
console.log(`registered MCP server ${SERVER_ID} -> ${serverUrl}`);
if (!server.toolsRefreshedAt || server.toolsRefreshError) {
  console.log(
    `  (its tools/list was not read: is \`node client/examples/quickstart/server.mjs\` running on port ${port}?)`,
  );
}
if (!gatewayPolicy.trustedServers.includes(SERVER_ID)) {
  const { updateGatewayPolicy } = await admin.graphql(
    `mutation($i: GatewayPolicyInput!) {
       updateGatewayPolicy(input: $i) { __typename ... on Problem { code message } } }`,
    { i: { trustedServers: [...gatewayPolicy.trustedServers, SERVER_ID] } },
  );
  succeeded(`trusting ${SERVER_ID}`, updateGatewayPolicy);
}
const { publishNplPolicy } = await admin.graphql(
  `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
     ... on MutationPublishNplPolicySuccess { data { uri } } ... on Problem { code message } } }`,
  { i: { source: QUICKSTART_POLICY } },
);
const { uri } = succeeded('publishing quickstart-guard', publishNplPolicy).data;
await admin.graphql('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri });
console.log(
  `published and pinned ${uri}: export_customers is denied, send_payment > 100 waits for a human`,
);
