// The Policies screen in Chromium against a real gateway: a draft's engine errors appear at their
// line and column (list, gutter marker and underline) and block publishing; a fixed draft is tried
// against sample calls, published, pinned and unpinned, and then really decides inspect; an
// unchanged next version is warned about before publishing, and a new version is pinned in place
// of the pinned one by default; the gateway policy form saves a change that survives a reload
// and shows an invalid field's error; usage limits are added there, an invalid one's issue shows
// at that limit's field, and the saved list is the policy's.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { inspectBody } from '../support/gateway.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

const policyText = (action: string) => `version: "1.0.0"
policyName: console-guard
targetAgents: ["*"]
rules:
  - ruleId: block_share
    action: ${action}
    condition: "tool.name == 'share_document'"
    alertSeverity: CRITICAL
  - ruleId: hold_transfer
    action: REQUIRE_HUMAN
    condition: "tool.name == 'wire_transfer' && args.amount > 1000"
    alertSeverity: MEDIUM
`;
const URI = 'svc://console-guard@1.0.0';

async function openPolicies(page: Page): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Screens' })
    .getByRole('link', { name: 'Policies' })
    .click();
  await page.getByRole('heading', { name: 'Policies', level: 2 }).waitFor();
}

/**
 * Replaces the editor's text as a paste does: CodeMirror inserts the clipboard text itself.
 * (Playwright's fill() edits the contenteditable through the browser's editing commands, which
 * write inline style attributes the CSP rightly refuses; no user action does that.)
 */
async function pasteInto(page: Page, name: string, text: string): Promise<void> {
  const editor = page.getByRole('textbox', { name });
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await editor.evaluate((element, pasted) => {
    const data = new DataTransfer();
    data.setData('text/plain', pasted);
    element.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
    );
  }, text);
}

/** Whether the vertical centre of `marker` lies inside the box of `line`. */
async function sameRow(page: Page, marker: string, line: number): Promise<boolean> {
  const markerBox = await page.locator(marker).first().boundingBox();
  const lineBox = await page
    .locator('.cm-content .cm-line')
    .nth(line - 1)
    .boundingBox();
  if (!markerBox || !lineBox) return false;
  const centre = markerBox.y + markerBox.height / 2;
  return centre >= lineBox.y && centre <= lineBox.y + lineBox.height;
}

describeInBrowser('operator console: policies', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('shows a draft error at its line and column, then publishes a fixed draft that governs inspect', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openPolicies(page);
    await page.getByText('No policy is published in this tenant yet.').waitFor();
    await page.getByRole('button', { name: 'New policy' }).click();
    const publish = page.getByRole('button', { name: 'Publish' });

    // `action: BLOK` is on line 6; its value starts at column 13.
    await pasteInto(page, 'Policy source', policyText('BLOK'));
    const problems = page.getByRole('list', { name: 'Problems in the draft' });
    await problems.getByText('line 6, column 13: action must be one of').waitFor();
    await page.locator('.cm-content .cm-line').nth(5).locator('.cm-lintRange-error').waitFor();
    expect(await page.locator('.cm-content .cm-line').nth(5).textContent()).toContain('BLOK');
    expect(await page.locator('.cm-lint-marker-error').count()).toBe(1);
    expect(await sameRow(page, '.cm-lint-marker-error', 6)).toBe(true);
    expect(await publish.isDisabled()).toBe(true);

    await pasteInto(page, 'Policy source', policyText('BLOCK'));
    await page.getByText(/^Valid, content hash/).waitFor();
    expect(await page.locator('.cm-lint-marker-error').count()).toBe(0);
    expect(await publish.isEnabled()).toBe(true);

    // Try it: one blocked call and one held call, decided by the unpublished draft.
    await page.getByLabel('Tool name 1', { exact: true }).fill('share_document');
    await page.getByRole('button', { name: 'Add call' }).click();
    await page.getByLabel('Tool name 2', { exact: true }).fill('wire_transfer');
    await page.getByLabel('Arguments 2', { exact: true }).fill('{"amount": 5000}');
    await page.getByRole('button', { name: 'Evaluate calls' }).click();
    const decisions = page.getByRole('table', { name: 'Decisions of the sample calls' });
    const blocked = decisions.getByRole('row').filter({ hasText: 'share_document' });
    await blocked.getByText('deny', { exact: true }).waitFor();
    await blocked.getByText('block_share').waitFor();
    await blocked.getByText('NPL_POLICY_BLOCK').waitFor();
    const held = decisions.getByRole('row').filter({ hasText: 'wire_transfer' });
    await held.getByText('require_human_approval').waitFor();
    await held.getByText('hold_transfer').waitFor();
    await held.getByText('NPL_REQUIRE_HUMAN').waitFor();

    await publish.click();
    const versions = page.getByRole('table', { name: 'Versions of console-guard' });
    await versions.getByRole('row').filter({ hasText: '1.0.0' }).waitFor();
    await page.getByRole('heading', { name: 'console-guard', level: 3 }).waitFor();

    // The published version decides an inspect that names it.
    await gateway.sync();
    const named = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool: 'share_document', policy: URI }),
    );
    expect(named.body).toMatchObject({
      decision: 'deny',
      reasonCode: 'NPL_POLICY_BLOCK',
      ruleId: 'block_share',
      policy: URI,
    });
    const allowed = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool: 'read_file', policy: URI }),
    );
    expect(allowed.body.decision).toBe('allow');

    // Pinned, it decides every inspect; unpinned, no longer.
    await page.getByRole('button', { name: `Pin ${URI}`, exact: true }).click();
    await versions.getByText('pinned', { exact: true }).waitFor();
    await gateway.sync();
    const pinned = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool: 'share_document' }),
    );
    expect(pinned.body).toMatchObject({ decision: 'deny', ruleId: 'block_share' });
    await page.getByRole('button', { name: `Unpin ${URI}` }).click();
    await page.getByRole('button', { name: `Pin ${URI}`, exact: true }).waitFor();
    expect(await versions.getByText('pinned', { exact: true }).count()).toBe(0);
    await gateway.sync();
    const unpinned = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool: 'share_document' }),
    );
    expect(unpinned.body.decision).toBe('allow');

    // A published version's source, and the start of its next version.
    await page.getByRole('button', { name: `View source of ${URI}` }).click();
    const dialog = page.getByRole('dialog', { name: `Source of ${URI}` });
    await dialog.getByText('hold_transfer', { exact: false }).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: `Edit ${URI} as a new version` }).click();
    await page.locator('.cm-content .cm-line').first().getByText('version: "1.0.1"').waitFor();

    // Changed content under the published version is refused before publishing, at its line.
    await pasteInto(page, 'Policy source', policyText('BLOCK').replace('MEDIUM', 'LOW'));
    await page
      .getByText(`line 1, column 10: ${URI} is already published with other content`)
      .waitFor();
    await page.locator('.cm-content .cm-line').first().locator('.cm-lintRange-error').waitFor();
    expect(await sameRow(page, '.cm-lint-marker-error', 1)).toBe(true);
    expect(await page.getByRole('button', { name: 'Publish' }).isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('warns before publishing an unchanged version, and pins the next one in place of the pinned one by default', async () => {
    const { page, errors } = await browser.newPage();
    const upgrade = (version: string, limit: number) => `version: "${version}"
policyName: console-upgrade
targetAgents: ["*"]
rules:
  - ruleId: block_large_transfer
    action: BLOCK
    condition: "tool.name == 'wire_transfer' && args.amount > ${limit}"
    alertSeverity: MEDIUM
`;
    const [OLD, NEW] = ['svc://console-upgrade@1.0.0', 'svc://console-upgrade@1.0.1'];
    await gateway.publishPolicy(gateway.tenant.id, upgrade('1.0.0', 100));
    await signIn(page, gateway.url, gateway.consoleKey);
    await openPolicies(page);
    const versions = page.getByRole('table', { name: 'Versions of console-upgrade' });
    const row = (version: string) =>
      versions
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name: version, exact: true }) });
    await page.getByRole('button', { name: `Pin ${OLD}`, exact: true }).click();
    await row('1.0.0').getByText('pinned', { exact: true }).waitFor();
    await page
      .getByText(
        'Every pinned policy is evaluated on every inspect; the most restrictive decision wins. ' +
          'Pinning another version of console-upgrade replaces 1.0.0 by default',
      )
      .waitFor();

    // The next version with the rules unchanged: warned at its version line, before sending.
    await page.getByRole('button', { name: `Edit ${OLD} as a new version` }).click();
    const unchanged = `line 1, column 10: ${NEW} is identical to ${OLD} apart from its version: it changes no rule`;
    await page.getByRole('list', { name: 'Problems in the draft' }).getByText(unchanged).waitFor();
    await page.locator('.cm-content .cm-line').first().locator('.cm-lintRange-warning').waitFor();
    expect(await row('1.0.1').count()).toBe(0);

    // Relaxed, it publishes without the warning.
    await pasteInto(page, 'Policy source', upgrade('1.0.1', 1000));
    await page.getByText(unchanged).waitFor({ state: 'hidden' });
    await page.getByText(/^Valid, content hash/).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await row('1.0.1').waitFor();

    // 1.0.1 offers to replace 1.0.0 by default, and to pin beside it.
    await page.getByRole('button', { name: `Other ways to pin ${NEW}` }).click();
    await page.getByRole('menuitem', { name: 'Pin beside it' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: `Pin ${NEW} in place of ${OLD}` }).click();
    await row('1.0.1').getByText('pinned', { exact: true }).waitFor();
    await page.getByRole('button', { name: `Pin ${OLD} in place of ${NEW}` }).waitFor();
    expect(await versions.getByText('pinned', { exact: true }).count()).toBe(1);
    await gateway.sync();
    const transfer = (amount: number) =>
      gateway.inspect(
        inspectBody(gateway.tenant.agentId, { tool: 'wire_transfer', args: { amount } }),
      );
    expect((await transfer(500)).body.decision).toBe('allow');
    expect((await transfer(5000)).body).toMatchObject({ decision: 'deny', policy: NEW });
    expect(errors).toEqual([]);
  });

  it('saves a gateway policy change that survives a reload and shows a field error from the API', async () => {
    const { page, errors } = await browser.newPage({ colorScheme: 'dark' });
    await signIn(page, gateway.url, gateway.consoleKey);
    await openPolicies(page);
    await page.getByRole('tab', { name: 'Gateway policy' }).click();
    const blockedTools = page.getByRole('combobox', { name: 'Blocked tools' });
    await blockedTools.fill('legacy_tool');
    await blockedTools.press('Enter');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The gateway policy is published.').waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'Policies', level: 2 }).waitFor();
    await page.getByRole('tab', { name: 'Gateway policy' }).click();
    await page.getByText('Last changed').waitFor();
    const pill = page.locator('.mantine-TagsInput-pill').filter({ hasText: 'legacy_tool' });
    await pill.waitFor();
    await gateway.sync();
    const refused = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool: 'legacy_tool' }),
    );
    expect(refused.body.decision).toBe('deny');

    const wait = page.getByLabel('Approval wait (seconds)', { exact: true });
    await wait.fill('5000');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('must be an integer from 0 to 3600', { exact: true }).waitFor();
    expect(await wait.getAttribute('aria-invalid')).toBe('true');
    expect(errors).toEqual([]);
  });

  it('suggests the registered server ids as trusted servers and warns about an unregistered one', async () => {
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId: 'crm',
      url: 'http://127.0.0.1:9/crm',
    });
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: [] });
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openPolicies(page);
    await page.getByRole('tab', { name: 'Gateway policy' }).click();
    const trusted = page.getByRole('combobox', { name: 'Trusted servers' });
    await trusted.click();
    await page.getByRole('option', { name: 'crm', exact: true }).click();
    // A typo is stored (a server may be registered after it is trusted), with a warning.
    await trusted.fill('cmr');
    await trusted.press('Enter');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved with a warning').waitFor();
    const warning = page.getByRole('status').filter({ hasText: 'Saved, with a warning' });
    await warning.getByText('trustedServers[1]: no MCP server "cmr" is registered').waitFor();
    expect(await warning.textContent()).toContain('registered: crm');
    const policy = await gateway.db.query<{ trustedServers: string[] }>(
      'select "trustedServers" from gateway_policies where "tenantId" = $1',
      [gateway.tenant.id],
    );
    expect(policy[0]?.trustedServers).toEqual(['crm', 'cmr']);

    // Removing the typo (Backspace takes the last pill) clears the warning; saving stores none.
    await trusted.press('Backspace');
    await warning.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The gateway policy is published.').waitFor();
    expect(await page.getByText('Saved, with a warning').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it("adds usage limits, shows an invalid one's error at its field, and saves the list", async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openPolicies(page);
    await page.getByRole('tab', { name: 'Gateway policy' }).click();
    await page.getByText('No limits: calls are not counted.').waitFor();
    const limit = (n: number) => page.getByRole('group', { name: `Limit ${n}` });
    const choose = async (n: number, field: string, option: string) => {
      await limit(n).getByRole('combobox', { name: field, exact: true }).click();
      await page.getByRole('option', { name: option, exact: true }).click();
    };

    // A budget per agent per day, held for a human past it.
    await page.getByRole('button', { name: 'Add limit' }).click();
    await limit(1).getByLabel('Limit id', { exact: true }).fill('daily_payments');
    await limit(1).getByLabel('Tools', { exact: true }).fill('send_payment');
    await limit(1).getByLabel('Tools', { exact: true }).press('Enter');
    await limit(1).getByRole('button', { name: 'Window of one day' }).click();
    await limit(1).getByLabel('Budget argument', { exact: true }).fill('amount');
    await limit(1).getByLabel('Budget maximum', { exact: true }).fill('10000.5');
    await choose(1, 'Action', 'Hold for a human');
    // A call count per agent and tool, whose maximum of 0 the gateway refuses.
    await page.getByRole('button', { name: 'Add limit' }).click();
    await limit(2).getByLabel('Limit id', { exact: true }).fill('searches');
    await choose(2, 'Counted per', 'Agent and tool');
    await limit(2).getByLabel('Tools', { exact: true }).fill('search*');
    await limit(2).getByLabel('Tools', { exact: true }).press('Enter');
    await limit(2).getByRole('button', { name: 'Window of one minute' }).click();
    await limit(2).getByLabel('Max calls', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Save' }).click();

    const maxCalls = limit(2).getByLabel('Max calls', { exact: true });
    await limit(2).getByText('must be an integer from 1 to 1000000000 or null').waitFor();
    expect(await maxCalls.getAttribute('aria-invalid')).toBe('true');
    expect(await limit(1).locator('[aria-invalid="true"]').count()).toBe(0);
    await page.getByText('The gateway refused this change').waitFor();

    await maxCalls.fill('30');
    expect(await maxCalls.getAttribute('aria-invalid')).not.toBe('true');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The gateway policy is published.').waitFor();
    const read = await graphql<{ gatewayPolicy: { limits: unknown[] } }>(
      gateway.url,
      gateway.consoleKey,
      '{ gatewayPolicy { limits { limitId per tools servers windowSeconds maxCalls sumArgument maxSum action } } }',
    );
    expect(read.data?.gatewayPolicy.limits).toEqual([
      {
        limitId: 'daily_payments',
        per: 'AGENT',
        tools: ['send_payment'],
        servers: [],
        windowSeconds: 86_400,
        maxCalls: null,
        sumArgument: 'amount',
        maxSum: 10_000.5,
        action: 'REQUIRE_HUMAN',
      },
      {
        limitId: 'searches',
        per: 'AGENT_TOOL',
        tools: ['search*'],
        servers: [],
        windowSeconds: 60,
        maxCalls: 30,
        sumArgument: null,
        maxSum: null,
        action: 'DENY',
      },
    ]);

    // Saved, nothing is left to save; removing a limit is a change, and saving sends the rest.
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await limit(1).getByRole('button', { name: 'Remove limit 1' }).click();
    expect(await limit(1).getByLabel('Limit id', { exact: true }).inputValue()).toBe('searches');
    expect(await limit(2).count()).toBe(0);
    const saved = page.waitForResponse(
      (response) => response.request().postData()?.includes('UpdateGatewayPolicy') ?? false,
    );
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await saved).status()).toBe(200);
    const after = await graphql<{ gatewayPolicy: { limits: { limitId: string }[] } }>(
      gateway.url,
      gateway.consoleKey,
      '{ gatewayPolicy { limits { limitId } } }',
    );
    expect(after.data?.gatewayPolicy.limits).toEqual([{ limitId: 'searches' }]);
    expect(errors).toEqual([]);
  });
});
