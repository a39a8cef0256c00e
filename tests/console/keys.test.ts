// The API keys screen in Chromium against a real gateway, as an operator meets it: create an
// approver key (secret shown once) and sign in with it, landing on Approvals; create a kill-only
// key and kill an agent with it; revoke a key and see it refused; the gateway's refusals (a key
// holding scopes the operator lacks, the last tenants:admin key) shown in the console.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inspectBody } from '../support/gateway.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  OPERATOR_SCOPES,
  signIn,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: API keys', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  /** The gateway's only tenants:admin key (the console key lacks that scope). */
  let adminKey: string;

  /** A GraphQL request with `key`: its HTTP status and body. */
  async function graphqlAs(key: string, query: string, variables: Record<string, unknown> = {}) {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as { data?: unknown } };
  }

  /** The status of `me` with `key`: 200 while it works, 401 once revoked. */
  const statusOf = async (key: string) => (await graphqlAs(key, '{ me { apiKeyId } }')).status;

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    adminKey = await gateway.addApiKey(gateway.tenant.id, [...OPERATOR_SCOPES, 'tenants:admin']);
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('creates an approver key in the console; signed in with it, the console opens on Approvals', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    // Each scope is described; one the signed-in key lacks cannot be chosen.
    await dialog.getByText('See held calls and approve or reject them.').waitFor();
    expect(await dialog.getByRole('checkbox', { name: 'tenants:admin' }).isDisabled()).toBe(true);
    // Nothing filled in: the API's issues land at their fields.
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await dialog.getByText('must be 1-200 characters', { exact: false }).first().waitFor();

    await dialog.getByLabel('Name').fill('approvers');
    await dialog.getByRole('button', { name: 'Approver', exact: true }).click();
    expect(await dialog.getByRole('checkbox', { name: 'approvals:decide' }).isChecked()).toBe(true);
    expect(await dialog.getByRole('checkbox', { name: 'audit:read' }).isChecked()).toBe(false);
    await dialog.getByRole('combobox', { name: 'Expires' }).click();
    await page.getByRole('option', { name: 'In 30 days' }).click();
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Key created: copy it now' });
    await shown.getByText('Shown once').waitFor();
    await shown.getByText(/it expires /).waitFor();
    const secret = (await shown.getByLabel('New API key').textContent()) ?? '';
    expect(secret).toMatch(/^agk_/);
    expect(await shown.getByRole('button', { name: 'Copy API key' }).count()).toBe(1);
    await shown.getByRole('button', { name: 'I have stored it, close' }).click();
    await shown.waitFor({ state: 'detached' });
    const row = page.getByRole('row').filter({ hasText: 'approvers' });
    await row.getByText('approvals:decide').waitFor();
    expect(await row.getByText('active').count()).toBe(1);
    expect(await row.getByText('never').count()).toBe(1); // never used; it expires
    expect(await page.content()).not.toContain(secret);
    expect(errors).toEqual([]);

    // The approver signs in with it and lands on the queue, not on an Overview it cannot read.
    const approver = await browser.newPage();
    await signIn(approver.page, gateway.url, secret);
    await approver.page.getByRole('heading', { name: 'Approvals', level: 2 }).waitFor();
    expect(new URL(approver.page.url()).pathname).toBe('/console/approvals');
    expect(await approver.page.getByText('Not allowed with this key').count()).toBe(0);
    expect(approver.errors).toEqual([]);
  });

  it('a kill-only key made in the console kills an agent named by its id', async () => {
    // An operator makes it in the console with the preset.
    const operator = await browser.newPage();
    await signIn(operator.page, gateway.url, gateway.consoleKey);
    await operator.page.goto(`${gateway.url}/console/keys`);
    await operator.page.getByRole('button', { name: 'Create key' }).click();
    const dialog = operator.page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('incident-kill');
    await dialog.getByRole('button', { name: 'Kill only', exact: true }).click();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secret = (await operator.page.getByLabel('New API key').textContent()) ?? '';
    expect(secret).toMatch(/^agk_/);
    expect(operator.errors).toEqual([]);
    await operator.context.close();
    const agentId = await gateway.addAgent(gateway.tenant.id);

    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, secret);
    // It cannot read agents: it lands on the kill form of the Agents screen.
    await page.getByText('Kill only', { exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/agents');
    // A colleague's link to the agent's page fills the id in.
    await page.goto(`${gateway.url}/console/agents/${agentId}`);
    const identifier = page.getByLabel('Agent id or public key');
    await identifier.waitFor();
    expect(await identifier.inputValue()).toBe(agentId);
    await page.getByLabel('Reason').fill('incident INC-9: kill-only key');
    await page.getByRole('button', { name: 'Kill agent' }).click();
    const confirm = page.getByRole('dialog', { name: 'Kill this agent?' });
    await confirm.getByText(agentId, { exact: false }).waitFor();
    await confirm.getByRole('button', { name: 'Kill agent' }).click();

    await page.getByText('Agent killed').waitFor();
    await page
      .getByRole('table', { name: 'Kill answer' })
      .getByText('incident INC-9', { exact: false })
      .waitFor();
    const after = await gateway.inspect(inspectBody(agentId));
    expect(after.status).toBe(403);
    expect(after.body.reasonCode).toBe('AGENT_REVOKED');
    expect(errors).toEqual([]);
  });

  it('revokes a key after a confirmation; the key is refused from then on', async () => {
    const created = await graphqlAs(
      gateway.consoleKey,
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret } }',
      { input: { name: 'temp-reader', scopes: ['audit:read'] } },
    );
    const secret = (created.body.data as { createApiKey: { secret: string } }).createApiKey.secret;
    expect(await statusOf(secret)).toBe(200);
    // A use recorded (the gateway writes uses in batches): the table shows when.
    await gateway.db.prisma.apiKey.updateMany({
      where: { name: 'temp-reader' },
      data: { lastUsedAt: new Date('2030-01-02T03:04:05Z') },
    });

    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.goto(`${gateway.url}/console/keys`);
    const row = page.getByRole('row').filter({ hasText: 'temp-reader' });
    const lastUsed = await page.evaluate(() => new Date('2030-01-02T03:04:05Z').toLocaleString());
    await row.getByText(lastUsed, { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Revoke temp-reader' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke temp-reader?' });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('temp-reader revoked').waitFor();
    await row.waitFor({ state: 'detached' });
    await page.getByRole('switch', { name: /^Show revoked keys/ }).check();
    await row.getByText('revoked', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Revoke temp-reader' }).count()).toBe(0);

    expect(await statusOf(secret)).toBe(401);
    const refused = await browser.newPage();
    await refused.page.goto(`${gateway.url}/console/`);
    await refused.page.getByLabel('API key').fill(secret);
    await refused.page.getByLabel('API key').press('Enter');
    await refused.page.getByText('This API key was not accepted').waitFor();
    expect(errors).toEqual([]);
  });

  it("shows the gateway's refusals: a key beyond the operator's scopes, the last admin key", async () => {
    // The console key lacks tenants:admin: it is told before sending that it cannot revoke it.
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.goto(`${gateway.url}/console/keys`);
    const table = page.getByRole('table', { name: 'API keys' });
    const adminRow = table.getByRole('row').filter({ hasText: 'tenants:admin' });
    await adminRow.getByRole('button', { name: /^Revoke / }).click();
    const beyond = page.getByRole('dialog', { name: /^Revoke / });
    await beyond.getByText('Your key cannot revoke it').waitFor();
    expect(await beyond.getByRole('button', { name: 'Revoke key' }).isDisabled()).toBe(true);
    expect(errors).toEqual([]);

    // The gateway's only tenants:admin key revoking itself: refused, with the registry's words.
    const admin = await browser.newPage();
    await signIn(admin.page, gateway.url, adminKey);
    await admin.page.goto(`${gateway.url}/console/keys`);
    const own = admin.page.getByRole('row').filter({ hasText: 'signed in' });
    await own.getByRole('button', { name: /^Revoke / }).click();
    const dialog = admin.page.getByRole('dialog', { name: /^Revoke / });
    await dialog.getByText('This is the key you are signed in with').waitFor();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.getByText('API_KEY_LAST_ADMIN').waitFor();
    await dialog.getByText(/is the last active key holding tenants:admin/).waitFor();
    await dialog.getByText(/admin-key reset/).waitFor();
    expect(await statusOf(adminKey)).toBe(200);
    expect(admin.errors).toEqual([]);
  });
});
