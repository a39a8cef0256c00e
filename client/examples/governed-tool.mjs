// A first governed tool, against a gateway started with `npm install && npm start`:
//
//   node client/examples/governed-tool.mjs
//
// It reads the admin key `npm start` wrote (./data/admin-api-key), prepares the tenant once
// (a server id the agent's tools belong to, a policy that blocks one call), spawns an agent with
// the REST spawn endpoint, wraps a local function with governTool, and calls it twice: allowed
// (the function runs) and denied (GatewayDenied, the function does not run).
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ADMIN_KEY_FILE (default
// ./data/admin-api-key, or $AGENT_GATEWAY_DATA_DIR/admin-api-key).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGatewayClient, GatewayDenied } from '@agent-gateway/client';

const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const keyFile =
  process.env.ADMIN_KEY_FILE ?? join(process.env.AGENT_GATEWAY_DATA_DIR ?? 'data', 'admin-api-key');
const adminKey = (await readFile(keyFile, 'utf8')).trim();
const SERVER_ID = 'quickstart-tools';
const POLICY = {
  version: '1.0.0',
  policyName: 'quickstart-guard',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'no_wire_transfers',
      action: 'BLOCK',
      condition: "tool.name == 'send_payment' && args.amount > 1000",
      alertSeverity: 'CRITICAL',
    },
  ],
};

/** One GraphQL operation with the admin key; throws on any error. */
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

// 1. The tenant, once: the server the tools belong to (the agent runs them itself: the gateway
//    never calls this URL), trusted; and a published policy version.
const { me, mcpServers, gatewayPolicy } = await graphql(
  '{ me { tenant { id } } mcpServers { serverId } gatewayPolicy { trustedServers } }',
);
if (!mcpServers.some((server) => server.serverId === SERVER_ID)) {
  await graphql(
    'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { serverId } }',
    {
      i: { serverId: SERVER_ID, url: 'http://127.0.0.1:9/mcp' },
    },
  );
}
if (!gatewayPolicy.trustedServers.includes(SERVER_ID)) {
  await graphql(
    'mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }',
    { i: { trustedServers: [...gatewayPolicy.trustedServers, SERVER_ID] } },
  );
}
await graphql(
  'mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) { __typename } }',
  {
    i: { document: POLICY },
  },
);

// 2. An agent, spawned over REST: its id, key pair, credential and OAuth client in one answer.
const spawned = await fetch(`${baseUrl}/api/v1/agents/spawn`, {
  method: 'POST',
  headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    name: 'quickstart-agent',
    system_prompt: 'You pay invoices.',
    persona: { tone: 'terse', language: 'en' },
    allowed_tools: ['send_payment'],
    mcp_audiences: [`mcp://${SERVER_ID}`],
  }),
});
if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
const { agent, private_key_jwk: privateKeyJwk } = await spawned.json();

// 3. The three lines: a client, a governed tool, a call.
const gateway = createGatewayClient({
  baseUrl,
  tenantId: me.tenant.id,
  agentId: agent.id,
  apiKey: adminKey, // in production: a key with agents:execute only
  policy: 'svc://quickstart-guard@1.0.0',
  serverId: SERVER_ID,
  privateKeyJwk, // presents the agent's credential and Agent-Proof
});
const sendPayment = gateway.governTool({ name: 'send_payment' }, async ({ to, amount }) => {
  console.log(`  (the tool runs: paying ${amount} to ${to})`);
  return { paid: amount, to };
});

console.log('allowed call:');
console.log('  result:', JSON.stringify(await sendPayment({ to: 'acme', amount: 120 })));

console.log('denied call:');
try {
  await sendPayment({ to: 'mallory', amount: 50_000 });
  console.log('  unexpectedly allowed');
  process.exitCode = 1;
} catch (error) {
  if (!(error instanceof GatewayDenied)) throw error;
  console.log(
    `  GatewayDenied: ${error.reasonCode} (rule ${error.ruleId}, audit ${error.auditId})`,
  );
}
