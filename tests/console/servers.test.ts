// The MCP servers screen in Chromium against a real gateway and a real MCP upstream: register a
// server (its tools are learnt and counted), edit its mock results, approve a tool definition the
// upstream changed, register an unreachable one (saved, with its refresh error shown), see the
// API's field error for a malformed serverId, and remove a server after confirming.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { closedPortUrl } from '../data-plane/inspect/support.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: MCP servers', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  let upstream: McpUpstream;

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startConsoleGateway();
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await upstream?.close();
  });

  const serverRow = (page: Page, serverId: string) =>
    page.getByRole('table', { name: 'MCP servers' }).locator(`tr[data-server-id="${serverId}"]`);

  /** Fills the open form and submits it. */
  const submitForm = async (
    page: Page,
    fields: { serverId?: string; url?: string; mockResults?: string },
    button: 'Register' | 'Save changes',
  ) => {
    const dialog = page.getByRole('dialog');
    if (fields.serverId !== undefined) await dialog.getByLabel('Server id').fill(fields.serverId);
    if (fields.url !== undefined) await dialog.getByLabel('URL').fill(fields.url);
    if (fields.mockResults !== undefined) {
      await dialog.getByLabel('Mock results').fill(fields.mockResults);
    }
    await dialog.getByRole('button', { name: button }).click();
  };

  it('registers, edits, approves a changed tool definition, shows errors and removes', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers', level: 2 }).waitFor();
    await page.getByText('No MCP server is registered yet.').waitFor();

    // A malformed serverId: the API's refusal is shown at the field; nothing is registered.
    await page.getByRole('button', { name: 'Register server' }).click();
    await submitForm(page, { serverId: '-bad id', url: upstream.url }, 'Register');
    await page.getByText('serverId must be 1-128 letters, digits, . _ or -').waitFor();
    expect(
      await page.getByRole('dialog').getByLabel('Server id').getAttribute('aria-invalid'),
    ).toBe('true');

    // Mock results that are not a JSON object are refused by the form.
    await submitForm(page, { serverId: 'files', mockResults: '[1, 2]' }, 'Register');
    await page.getByText('Must be a JSON object: tool name -> result').waitFor();

    // A real upstream: registered, its tools learnt and counted.
    await submitForm(page, { mockResults: '{"echo": {"content": []}}' }, 'Register');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    const files = serverRow(page, 'files');
    await files.waitFor();
    expect(await files.textContent()).toContain(upstream.url);
    expect(await files.getByText('never learnt').count()).toBe(0);

    // The upstream changes a tool; editing the server's mock results learns its tools again.
    upstream.setToolDescription('echo', 'Now sends everything elsewhere.');
    await page.getByRole('button', { name: 'Edit files' }).click();
    await submitForm(
      page,
      { mockResults: '{"echo": {"content": [{"type": "text", "text": "mocked"}]}}' },
      'Save changes',
    );
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    const read = await graphql<{ mcpServers: { serverId: string; mockResults: unknown }[] }>(
      gateway.url,
      gateway.consoleKey,
      '{ mcpServers { serverId mockResults } }',
    );
    expect(read.data?.mcpServers).toEqual([
      {
        serverId: 'files',
        mockResults: { echo: { content: [{ type: 'text', text: 'mocked' }] } },
      },
    ]);

    // The held tool is counted in the list, reviewed and approved with the digest shown.
    await files.getByText('1 held').waitFor();
    await page.getByRole('button', { name: 'Tools of files' }).click();
    const drawer = page.getByRole('dialog');
    const change = drawer.getByLabel('Pending change of echo');
    await change.getByText('Now sends everything elsewhere.').waitFor();
    await change.getByRole('button', { name: 'Approve definition of echo' }).click();
    await drawer.getByText('No tool of this server is held.').waitFor();
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'hidden' });
    await files.getByText('1 held').waitFor({ state: 'detached' });

    // An unreachable upstream is registered anyway, with its refresh error shown.
    await page.getByRole('button', { name: 'Register server' }).click();
    await submitForm(page, { serverId: 'offline', url: await closedPortUrl() }, 'Register');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await serverRow(page, 'offline').getByText('refresh failed').waitFor();

    // Removal asks first.
    await page.getByRole('button', { name: 'Remove offline' }).click();
    await page
      .getByRole('dialog', { name: 'Remove offline?' })
      .getByRole('button', { name: 'Remove' })
      .click();
    await serverRow(page, 'offline').waitFor({ state: 'detached' });
    expect(await serverRow(page, 'files').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);
});
