// A first governed tool, against a gateway started with `npm install && npm start`:
//
//   node client/examples/governed-tool.mjs
//
// It spawns an agent with the REST spawn endpoint, wraps a local function with governTool, and
// calls it twice: allowed (the function runs) and denied (GatewayDenied, the function does not).
//
// What the tenant needs for that, under names only this example uses (server `governed-tool`,
// policy svc://governed-tool-guard@1.0.0, tool transfer_funds), so it runs as often as you like,
// before or after the quickstart:
// - a registered MCP server: spawn gives an agent audiences of registered servers only, and a call
//   is inspected for a server the gateway policy trusts. The tool runs here, in the agent, so the
//   example serves the tool's definition over MCP itself for as long as it runs (the gateway learns
//   it as it learns any server's tools) and then removes the registration and the trust: nothing
//   is left pointing at a port nobody listens on. (A run cut short leaves them until the next run
//   replaces and removes them.)
// - its policy, published once: publishing the same version again is a no-op.
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ADMIN_KEY_FILE (default
// ./data/admin-api-key, or $AGENT_GATEWAY_DATA_DIR/admin-api-key).
import { createServer } from 'node:http';
import { createGatewayClient, GatewayDenied } from '@agent-gateway/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { connectAsAdmin, fail, gatewayUrl, succeeded } from './gateway-admin.mjs';

const SERVER_ID = 'governed-tool';
const POLICY = {
  version: '1.0.0',
  policyName: 'governed-tool-guard',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'no_large_transfers',
      action: 'BLOCK',
      condition: "tool.name == 'transfer_funds' && args.amount > 1000",
      alertSeverity: 'CRITICAL',
    },
  ],
};

/** The tool: what the agent runs once the gateway allows the call. */
async function transferFunds({ to, amount }) {
  console.log(`  (the tool runs: transferring ${amount} to ${to})`);
  return { transferred: amount, to };
}

/** The tool's definition over MCP Streamable HTTP (stateless), on a free loopback port. */
async function serveToolDefinition() {
  const http = createServer(async (request, response) => {
    const server = new McpServer({ name: SERVER_ID, version: '1.0.0' });
    server.registerTool(
      'transfer_funds',
      { description: 'Transfer funds.', inputSchema: { to: z.string(), amount: z.number() } },
      async (args) => ({
        content: [{ type: 'text', text: JSON.stringify(await transferFunds(args)) }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { http, url: `http://127.0.0.1:${http.address().port}/mcp` };
}

const admin = await connectAsAdmin();
const tools = await serveToolDefinition();
try {
  await run();
} finally {
  await unregister();
  tools.http.close();
}

async function run() {
  // 1. The tenant: the server, trusted, and the policy.
  await admin.graphql(
    'mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { serverId } }',
    { i: { serverId: SERVER_ID, url: tools.url } },
  );
  const { me, gatewayPolicy } = await admin.graphql(
    '{ me { tenant { id } } gatewayPolicy { trustedServers } }',
  );
  if (!gatewayPolicy.trustedServers.includes(SERVER_ID)) {
    await setTrustedServers([...gatewayPolicy.trustedServers, SERVER_ID]);
  }
  const { publishNplPolicy } = await admin.graphql(
    `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
       ... on MutationPublishNplPolicySuccess { data { uri } } ... on Problem { code message } } }`,
    { i: { document: POLICY } },
  );
  const { uri } = succeeded('publishing governed-tool-guard', publishNplPolicy).data;

  // 2. An agent, spawned over REST: its id, key pair, credential and OAuth client in one answer.
  const spawned = await admin.post('/api/v1/agents/spawn', {
    name: 'governed-tool-agent',
    system_prompt: 'You move money.',
    persona: { tone: 'terse', language: 'en' },
    allowed_tools: ['transfer_funds'],
    mcp_audiences: [`mcp://${SERVER_ID}`],
  });
  if (spawned.status !== 201) {
    fail(`spawn: ${spawned.status} ${spawned.body?.reasonCode}: ${spawned.body?.message}`);
  }
  const { agent, private_key_jwk: privateKeyJwk } = spawned.body;

  // 3. The three lines: a client, a governed tool, a call.
  const gateway = createGatewayClient({
    baseUrl: gatewayUrl,
    tenantId: me.tenant.id,
    agentId: agent.id,
    apiKey: admin.key, // in production: a key with agents:execute only
    policy: uri,
    serverId: SERVER_ID,
    privateKeyJwk, // presents the agent's credential and Agent-Proof
  });
  const governedTransfer = gateway.governTool({ name: 'transfer_funds' }, transferFunds);

  console.log('allowed call:');
  console.log('  result:', JSON.stringify(await governedTransfer({ to: 'acme', amount: 120 })));

  console.log('denied call:');
  try {
    await governedTransfer({ to: 'mallory', amount: 50_000 });
    console.log('  unexpectedly allowed');
    process.exitCode = 1;
  } catch (error) {
    if (!(error instanceof GatewayDenied)) throw error;
    console.log(
      `  GatewayDenied: ${error.reasonCode} (rule ${error.ruleId}, audit ${error.auditId})`,
    );
  }
}

async function setTrustedServers(trustedServers) {
  const { updateGatewayPolicy } = await admin.graphql(
    `mutation($i: GatewayPolicyInput!) {
       updateGatewayPolicy(input: $i) { __typename ... on Problem { code message } } }`,
    { i: { trustedServers } },
  );
  succeeded('updating trustedServers', updateGatewayPolicy);
}

/** Takes back the trust and the registration: the server stops with this process. */
async function unregister() {
  const { gatewayPolicy, mcpServers } = await admin.graphql(
    '{ gatewayPolicy { trustedServers } mcpServers { serverId } }',
  );
  if (gatewayPolicy.trustedServers.includes(SERVER_ID)) {
    await setTrustedServers(gatewayPolicy.trustedServers.filter((id) => id !== SERVER_ID));
  }
  if (mcpServers.some((server) => server.serverId === SERVER_ID)) {
    await admin.graphql('mutation($id: String!) { removeMcpServer(serverId: $id) }', {
      id: SERVER_ID,
    });
  }
}
