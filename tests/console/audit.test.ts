// The audit trail screen in Chromium against a real gateway: denied inspect calls of two agents
// are listed newest first, a new deny arrives live at the top without reload (and waits while the
// tail is paused), the agent and decision filters leave only matching rows, an entry's detail
// shows its hash links and opens the previous entry, and "Verify chain" finds the chain valid.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import type { AgentId } from '../../shared/ids.js';
import { graphql } from '../control-plane/graphql/support.js';
import { runCliToEnd } from '../support/cli-process.js';
import { inspectBody } from '../support/gateway.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: audit trail', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  let agentA: AgentId;
  let agentB: AgentId;

  /** A blocked tools/call of the agent; answers the id of its inspect.deny entry. */
  const deny = async (agentId: string): Promise<string> => {
    const answer = await gateway.inspect(inspectBody(agentId, { tool: 'drop_table' }));
    expect(answer.status).toBe(403);
    return answer.body.auditId as string;
  };

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    browser = await launchConsoleBrowser();
    agentA = gateway.tenant.agentId;
    agentB = await gateway.addAgent(gateway.tenant.id);
    // Through GraphQL, so an operator's entry without a decision is in the trail too.
    const registered = await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation { registerMcpServer(input: {serverId: "files", url: "http://127.0.0.1:9/mcp"}) { id } }',
    );
    expect(registered.errors).toBeUndefined();
    await gateway.setPolicy(gateway.tenant.id, {
      trustedServers: ['files'],
      blockedTools: ['drop_table'],
    });
    await deny(agentA);
    await deny(agentB);
    await deny(agentA);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  const rows = (page: Page) =>
    page.getByRole('table', { name: 'Audit entries' }).locator('tbody tr');
  const row = (page: Page, entryId: string) => page.locator(`tbody tr[data-entry-id="${entryId}"]`);
  const firstRowId = (page: Page) => rows(page).first().getAttribute('data-entry-id');

  /** Waits until there are `count` rows and the text of each contains `needle`. */
  const waitForRows = (page: Page, needle: string, count: number) =>
    page.waitForFunction(
      ([text, expected]) => {
        const table = document.querySelector('table[aria-label="Audit entries"]');
        const all = [...(table?.querySelectorAll('tbody tr') ?? [])];
        return all.length === expected && all.every((tr) => tr.textContent?.includes(text));
      },
      [needle, count] as const,
    );

  it('lists the denies, tails new ones live, filters, shows hash links and verifies the chain', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByRole('heading', { name: 'Audit trail', level: 2 }).waitFor();

    // The three denies of both agents are listed.
    await rows(page).filter({ hasText: agentA }).nth(1).waitFor();
    await rows(page).filter({ hasText: agentB }).first().waitFor();
    expect(await rows(page).filter({ hasText: 'inspect.deny' }).count()).toBe(3);

    // A new deny appears at the top without reload.
    const live = await deny(agentB);
    await row(page, live).waitFor();
    expect(await firstRowId(page)).toBe(live);

    // Paused, a new deny is held back; resumed, it goes to the top.
    await page.getByRole('switch', { name: 'Live tail' }).click();
    const held = await deny(agentA);
    await page.getByText('1 new held back').waitFor();
    expect(await row(page, held).count()).toBe(0);
    await page.getByRole('switch', { name: 'Live tail' }).click();
    await row(page, held).waitFor();
    expect(await firstRowId(page)).toBe(held);

    // Filter by agent: only that agent's rows.
    await page.getByLabel('Agent').fill(agentA);
    await waitForRows(page, agentA, 3);
    await page.getByLabel('Agent').fill('');
    await rows(page).filter({ hasText: agentB }).first().waitFor();

    // Filter by decision: only denies (the server's registration has no decision).
    await page.getByRole('combobox', { name: 'Decision' }).click();
    await page.getByRole('option', { name: 'deny' }).click();
    await waitForRows(page, 'inspect.deny', 5);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await rows(page).filter({ hasText: 'mcp_server.registered' }).waitFor();

    // A time range that starts tomorrow holds nothing.
    const tomorrow = new Date(Date.now() + 86_400_000);
    const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000);
    await page.getByLabel('From').fill(local.toISOString().slice(0, 16));
    await page.getByText('No entries match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await rows(page).filter({ hasText: 'mcp_server.registered' }).waitFor();

    // The newest entry's detail: its hash, its predecessor's hash, which opens that entry.
    await row(page, held).getByRole('button').click();
    const drawer = page.getByRole('dialog');
    await drawer.getByText('Hash chain').waitFor();
    const hash = await drawer.getByLabel('Entry hash', { exact: true }).textContent();
    const prevHash = await drawer.getByLabel('Previous hash', { exact: true }).textContent();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prevHash).toMatch(/^[0-9a-f]{64}$/);
    await drawer.getByRole('button', { name: /Open previous entry/ }).click();
    await drawer
      .getByLabel('Entry hash', { exact: true })
      .filter({ hasText: prevHash ?? '' })
      .waitFor();
    await drawer.getByRole('button', { name: /Open next entry/ }).waitFor();
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'hidden' });

    // The server verifies the whole chain.
    await page.getByRole('button', { name: 'Verify chain' }).click();
    await page.getByText('Chain valid').waitFor();
    await page.getByText(/entries checked/).waitFor();

    // The export holds every listed entry, one JSON object a line, oldest first.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export JSON Lines' }).click(),
    ]);
    const path = await download.path();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    const exported = lines.map((line) => JSON.parse(line) as { id: string; seq: string });
    expect(exported.length).toBe(await rows(page).count());
    expect(exported.at(-1)?.id).toBe(held);
    expect(exported.map((entry) => Number(entry.seq))).toEqual(
      exported.map((_, index) => index + 1),
    );
    // An operator who runs it through `audit verify` is told what the file is, not "cut off".
    const verified = await runCliToEnd(['audit', 'verify', path]);
    expect(verified.code).toBe(1);
    expect(verified.stdout[1]).toContain('this file is JSON Lines');

    // The verifiable export is the gateway's own: the whole chain, which our verifier accepts.
    const [verifiable] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Verifiable export' }).click(),
    ]);
    expect(verifiable.suggestedFilename()).toMatch(/^audit-.*\.json$/);
    const chain = JSON.parse(await readFile(await verifiable.path(), 'utf8')) as unknown[];
    expect(chain.length).toBe(exported.length);
    expect(await verifyAuditChain(chain)).toMatchObject({ ok: true, count: chain.length });
    expect(errors).toEqual([]);
  }, 120_000);

  it('loads older entries page by page', async () => {
    for (let i = 0; i < 50; i++) await deny(agentB);
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await rows(page).nth(49).waitFor();
    expect(await rows(page).count()).toBe(50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await rows(page).nth(50).waitFor();
    await rows(page).filter({ hasText: 'mcp_server.registered' }).waitFor();
    await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  }, 120_000);
});
