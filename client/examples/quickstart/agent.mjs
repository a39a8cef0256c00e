// The quickstart's agent: an unmodified MCP client (the official SDK) pointed at the gateway's
// MCP endpoint for the quickstart server. It finds the gateway's authorization server from the
// 401 and gets its token by itself, with an OAuth client of its own.
//
//   node client/examples/quickstart/agent.mjs
//
// It lists its tools and makes three calls: search_docs (allowed), export_customers (denied by the
// policy, in the audit trail) and send_payment of 250 (held: approve it in the console, and the
// call completes). The gateway keeps a held call open for its policy's approvalWaitSeconds
// (default 120 s); approved later, within the approval's lifetime (approvalTtlSeconds, default
// 15 min), the same call made again goes through: so every run is the same agent
// (quickstart-agent, role bookkeeper, spawned by the first run) making the same calls.
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ADMIN_KEY_FILE (default
// ./data/admin-api-key).
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectAsAdmin, fail, gatewayUrl } from '../gateway-admin.mjs';

const NAME = 'quickstart-agent';
const ROLE = 'bookkeeper';

// 1. The agent and an OAuth client for this run (in production a key with agents:manage does
//    this, not the agent itself). The first run spawns it, with its first client; later runs
//    find it and register a client: a client secret is shown once, and this process keeps none.
const admin = await connectAsAdmin();
const { agents, gatewayPolicy } = await admin.graphql(
  `query($role: String!) {
     agents(role: $role, status: "active", first: 100) { edges { node { id name } } }
     gatewayPolicy { approvalWaitSeconds } }`,
  { role: ROLE },
);
let agent = agents.edges.map((edge) => edge.node).find((node) => node.name === NAME);
let oauth;
if (agent) {
  const { registerOAuthClient } = await admin.graphql(
    `mutation($i: RegisterOAuthClientInput!) {
       registerOAuthClient(input: $i) { client { id } clientSecret } }`,
    { i: { agentId: agent.id } },
  );
  oauth = { clientId: registerOAuthClient.client.id, secret: registerOAuthClient.clientSecret };
  console.log(`reusing agent ${agent.name} (${agent.id}) with a new OAuth client`);
} else {
  const spawned = await admin.post('/api/v1/agents/spawn', {
    name: NAME,
    role: ROLE,
    system_prompt: 'You keep the books.',
    persona: { tone: 'terse', language: 'en' },
    allowed_tools: ['search_docs', 'export_customers', 'send_payment'],
    mcp_audiences: ['mcp://quickstart'],
  });
  if (spawned.status !== 201) {
    fail(
      `spawn: ${spawned.status} ${spawned.body?.reasonCode}: ${spawned.body?.message}` +
        ' (has `node client/examples/quickstart/setup.mjs` run?)',
    );
  }
  agent = spawned.body.agent;
  oauth = { clientId: spawned.body.oauth.client_id, secret: spawned.body.oauth.client_secret };
  console.log(`spawned agent ${agent.name} (${agent.id})`);
}

// 2. Connect as any MCP client would; the provider answers the gateway's 401 by itself.
const client = new Client({ name: NAME, version: '1.0.0' });
try {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/quickstart`), {
      authProvider: new ClientCredentialsProvider({
        clientId: oauth.clientId,
        clientSecret: oauth.secret,
        expectedIssuer: gatewayUrl,
      }),
    }),
  );
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);

  await call('search_docs', { query: 'expenses' });
  await call('export_customers', { segment: 'all' });
  console.log(`send_payment waits for a human: approve it at ${gatewayUrl}/console/approvals`);
  await call('send_payment', { to: 'acme', amount: 250 });
} finally {
  await client.close();
  // The client's secret was this run's only: retire it (the agent and its approvals stay).
  await admin.graphql('mutation($id: ID!) { revokeOAuthClient(clientId: $id) { id } }', {
    id: oauth.clientId,
  });
}

async function call(name, args) {
  const started = Date.now();
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      // A held call stays open until an operator decides or the gateway's wait ends; the
      // gateway's notice says where it is decided.
      onprogress: (progress) => console.log(`  ${progress.message ?? 'waiting'}`),
      resetTimeoutOnProgress: true,
      timeout: (gatewayPolicy.approvalWaitSeconds + 60) * 1000,
    });
    console.log(`${name}: ${result.content.map((part) => part.text).join(' ')}`);
  } catch (error) {
    const data = error?.data ?? {};
    if (data.reasonCode === 'APPROVAL_PENDING') {
      // Not a denial: the approval stays open, and this same call made again resumes it.
      const seconds = Math.round((Date.now() - started) / 1000);
      console.log(
        `${name}: still waiting for approval ${data.approvalId} after ${seconds} s: ` +
          `approve it at ${gatewayUrl}/console/approvals and run the agent again`,
      );
    } else if (data.reasonCode) {
      console.log(
        `${name}: denied ${data.reasonCode}${data.ruleId ? ` (rule ${data.ruleId})` : ''}`,
      );
    } else {
      console.log(`${name}: failed: ${error.message}`);
      process.exitCode = 1;
    }
  }
}
