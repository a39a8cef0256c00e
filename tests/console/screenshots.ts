/// <reference lib="dom" />
// Takes the screenshots of docs/console/ (`npm run docs:screenshots`): a real gateway with a
// little of everything (servers, a pinned policy, agents, allowed, denied and held calls, a kill,
// API keys), each screen in Chromium at a laptop's 1366×820, the approvals screen in the dark
// scheme too, the audit trail at a phone's 390 px as well.
// Not a test: it writes files for the documentation.
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/cli-process.js';
import { inspectBody } from '../support/gateway.js';
import { launchConsoleBrowser, signIn, startConsoleGateway } from './support.js';

const OUT = join(REPO_ROOT, 'docs', 'console');
const POLICY = `version: "1.0.0"
policyName: payments-guard
description: Wires need a human; customer exports are blocked.
targetAgents: ["*"]
rules:
  - ruleId: large_wires_need_a_human
    action: REQUIRE_HUMAN
    condition: tool.name == 'wire_transfer' && args.amount > 1000
    alertSeverity: CRITICAL
  - ruleId: no_customer_exports
    action: BLOCK
    condition: tool.name == 'export_customers'
    alertSeverity: MEDIUM
`;

async function graphql(url: string, key: string, query: string, variables = {}): Promise<unknown> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  // A file sink, so the audit screen shows a checkpoint anchored outside the database.
  const sinkDir = await mkdtemp(join(tmpdir(), 'screenshots-'));
  const gateway = await startConsoleGateway({
    auditCheckpoints: { entries: 1000, seconds: 3600, sinkFile: join(sinkDir, 'checkpoints') },
  });
  const { tenant } = gateway;
  await gateway.registerServer({
    tenantId: tenant.id,
    serverId: 'files',
    url: 'http://127.0.0.1:9/mcp',
  });
  await gateway.registerServer({
    tenantId: tenant.id,
    serverId: 'bank',
    url: 'http://127.0.0.1:9/mcp',
  });
  const uri = await gateway.publishPolicy(tenant.id, POLICY);
  await gateway.setPolicy(tenant.id, {
    trustedServers: ['files', 'bank'],
    blockedTools: ['drop_table'],
    pinnedPolicies: [uri],
    // So the held call with a token reaches the approval queue (masked) instead of being denied.
    exfilDetectSecrets: false,
  });
  const treasurer = await gateway.addAgent(tenant.id, { name: 'treasury-bot', role: 'treasurer' });
  const analyst = await gateway.addAgent(tenant.id, { name: 'report-writer', role: 'analyst' });
  const doomed = await gateway.addAgent(tenant.id, { name: 'site-scraper', role: 'scraper' });
  for (let i = 0; i < 12; i++) await gateway.inspect(inspectBody(analyst, { tool: 'read_file' }));
  for (let i = 0; i < 3; i++) await gateway.inspect(inspectBody(analyst, { tool: 'drop_table' }));
  await gateway.inspect(inspectBody(analyst, { server: 'bank', tool: 'export_customers' }));
  // A client that sends a broken body: a client error, not a policy deny.
  await gateway.inspect({ agent_id: analyst, tool_name: 'read_file' });
  await gateway.inspect(
    inspectBody(treasurer, {
      server: 'bank',
      tool: 'wire_transfer',
      args: { to: 'ACME GmbH', amount: 25_000, memo: 'invoice 2231' },
    }),
  );
  await gateway.inspect(
    inspectBody(treasurer, {
      server: 'bank',
      tool: 'wire_transfer',
      args: {
        to: 'Contoso',
        amount: 4_800,
        note: `token ghp_${'a1B2c3D4e5F6g7H8i9J0'.repeat(2).slice(0, 36)}`,
      },
    }),
  );
  await graphql(
    gateway.url,
    gateway.consoleKey,
    'mutation($id: ID!) { killAgent(agentId: $id, reason: "scraping outside its scope") { __typename } }',
    { id: doomed },
  );
  // Keys people make for others: an approvers' key that expires, a kill-only key, one revoked.
  const createKey = async (name: string, scopes: string[], expiresAt: string | null = null) => {
    const data = (await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id } } }',
      { input: { name, scopes, expiresAt } },
    )) as { createApiKey: { apiKey: { id: string } } };
    return data.createApiKey.apiKey.id;
  };
  await createKey(
    'approvers',
    ['approvals:decide'],
    new Date(Date.now() + 90 * 86_400_000).toISOString(),
  );
  await createKey('incident-kill', ['agents:kill']);
  const retired = await createKey('old-ci', ['agents:execute']);
  await graphql(
    gateway.url,
    gateway.consoleKey,
    'mutation($id: ID!) { revokeApiKey(id: $id) { id } }',
    {
      id: retired,
    },
  );

  const browser = await launchConsoleBrowser();
  const shoot = async (
    name: string,
    link: string,
    heading: string,
    scheme: 'light' | 'dark' = 'light',
    width?: number,
  ) => {
    const { page } = await browser.newPage({ colorScheme: scheme });
    if (width) await page.setViewportSize({ width, height: 844 });
    await signIn(page, gateway.url, gateway.consoleKey);
    const menu = page.getByRole('button', { name: 'Menu' });
    if (await menu.isVisible()) await menu.click();
    await page.getByRole('link', { name: link }).click();
    await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(OUT, `${name}.png`) });
    console.log(`wrote docs/console/${name}.png`);
    await page.context().close();
  };
  await shoot('overview', 'Overview', 'Overview');
  await shoot('approvals', 'Approvals', 'Approvals');
  await shoot('approvals-dark', 'Approvals', 'Approvals', 'dark');
  await shoot('agents', 'Agents', 'Agents');
  // The latest checkpoint cut and held by the sink (a new one waits a second to settle).
  await fetch(`${gateway.url}/api/v1/audit/checkpoint`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.consoleKey}` },
  });
  for (;;) {
    const answer = (await graphql(
      gateway.url,
      gateway.consoleKey,
      '{ auditSinks { backlog } }',
    )) as { auditSinks: { backlog: number }[] };
    if (answer.auditSinks.every((sink) => sink.backlog === 0)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await shoot('audit', 'Audit trail', 'Audit trail');
  await shoot('audit-narrow', 'Audit trail', 'Audit trail', 'light', 390);
  await shoot('policies', 'Policies', 'Policies');
  await shoot('servers', 'MCP servers', 'MCP servers');
  await shoot('keys', 'API keys', 'API keys');
  // The policy editor with a mistake on line 6, shown where it is.
  const editing = await browser.newPage();
  await signIn(editing.page, gateway.url, gateway.consoleKey);
  await editing.page.getByRole('link', { name: 'Policies' }).click();
  await editing.page.getByRole('button', { name: 'New policy' }).click();
  const editor = editing.page.getByRole('textbox', { name: 'Policy source' });
  await editor.click();
  await editing.page.keyboard.press('ControlOrMeta+A');
  await editor.evaluate(
    (element, text) => {
      const data = new DataTransfer();
      data.setData('text/plain', text);
      element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true }));
    },
    POLICY.replace('action: BLOCK', 'action: BLOK').replace('payments-guard', 'payments-guard-v2'),
  );
  await editing.page.getByText(/line \d+, column \d+: action must be one of/).waitFor();
  await editing.page.screenshot({ path: join(OUT, 'policy-editor.png') });
  console.log('wrote docs/console/policy-editor.png');
  await editing.context.close();

  // GraphiQL as a link to /graphql opens it, with the query run.
  const ide = await browser.newPage();
  await signIn(ide.page, gateway.url, gateway.consoleKey);
  const agentsQuery = `query Agents {
  agents(first: 5) {
    edges { node { name role status } }
  }
}`;
  await ide.page.goto(`${gateway.url}/graphql?query=${encodeURIComponent(agentsQuery)}`);
  await ide.page.getByRole('button', { name: /^Execute query/ }).click();
  await ide.page
    .locator('.graphiql-response .CodeMirror-line', { hasText: '"status"' })
    .first()
    .waitFor();
  await ide.page.screenshot({ path: join(OUT, 'graphiql.png') });
  console.log('wrote docs/console/graphiql.png');
  await ide.context.close();

  const { page } = await browser.newPage();
  await page.goto(`${gateway.url}/console/`);
  await page.getByLabel('API key').waitFor();
  await page.screenshot({ path: join(OUT, 'sign-in.png') });
  console.log('wrote docs/console/sign-in.png');
  await browser.close();
  await gateway.close();
}

await main();
