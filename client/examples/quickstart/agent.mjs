// The quickstart's agent: an unmodified MCP client (the official SDK) pointed at the gateway's
// MCP endpoint for the quickstart server. It is spawned first (its OAuth client comes with it),
// then finds the gateway's authorization server from the 401 and gets its token by itself.
//
//   node client/examples/quickstart/agent.mjs
//
// It lists its tools and makes three calls: search_docs (allowed), export_customers (denied by the
// policy, in the audit trail) and send_payment of 250 (held: approve it in the console, and the
// call completes). Environment: GATEWAY_URL, ADMIN_KEY_FILE (as setup.mjs).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const keyFile =
  process.env.ADMIN_KEY_FILE ?? join(process.env.AGENT_GATEWAY_DATA_DIR ?? 'data', 'admin-api-key');
const adminKey = (await readFile(keyFile, 'utf8')).trim();

// 1. Spawn the agent (in production a key with agents:manage does this, not the agent itself).
const spawned = await fetch(`${baseUrl}/api/v1/agents/spawn`, {
  method: 'POST',
  headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({
    name: `quickstart-agent-${Date.now().toString(36)}`,
    system_prompt: 'You keep the books.',
    persona: { tone: 'terse', language: 'en' },
    allowed_tools: ['search_docs', 'export_customers', 'send_payment'],
    mcp_audiences: ['mcp://quickstart'],
  }),
});
if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
const { agent, oauth } = await spawned.json();
console.log(`spawned agent ${agent.name} (${agent.id})`);

// 2. Connect as any MCP client would; the provider answers the gateway's 401 by itself.
const client = new Client({ name: 'quickstart-agent', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/quickstart`), {
    authProvider: new ClientCredentialsProvider({
      clientId: oauth.client_id,
      clientSecret: oauth.client_secret,
      expectedIssuer: baseUrl,
    }),
  }),
);
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);

async function call(name, args) {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      // A held call stays open until an operator decides; the gateway's notice says where.
      onprogress: (progress) => console.log(`  ${progress.message ?? 'waiting'}`),
      resetTimeoutOnProgress: true,
      timeout: 10 * 60_000,
    });
    console.log(`${name}: ${result.content.map((part) => part.text).join(' ')}`);
  } catch (error) {
    const reasonCode = error?.data?.reasonCode ?? error.message;
    console.log(
      `${name}: denied ${reasonCode}${error?.data?.ruleId ? ` (rule ${error.data.ruleId})` : ''}`,
    );
  }
}

await call('search_docs', { query: 'expenses' });
await call('export_customers', { segment: 'all' });
console.log(`send_payment waits for a human: approve it at ${baseUrl}/console/approvals`);
await call('send_payment', { to: 'acme', amount: 250 });
await client.close();
