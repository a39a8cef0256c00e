// The audit trail screen in Chromium against a real gateway: denied inspect calls of two agents
// are listed newest first, a new deny arrives live at the top without reload (and waits while the
// tail is paused), the agent and decision filters leave only matching rows, an entry's detail
// shows its hash links and opens the previous entry, and "Verify chain" finds the chain valid.
// Agents and actors show by name beside their ids, the agent filter takes a name (two agents may
// share one), decision badges are never cut, and at 390 px a row still says when, what and who.
import { readFile } from 'node:fs/promises';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../shared/audit/index.js';
import type { AgentId } from '../../shared/ids.js';
import { graphql, type Loose } from '../control-plane/graphql/support.js';
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

const HOLD_WIRES = `version: "1.0.0"
policyName: audit-names-guard
targetAgents: ["*"]
rules:
  - ruleId: wires_need_a_human
    action: REQUIRE_HUMAN
    condition: tool.name == 'wire'
    alertSeverity: MEDIUM
`;

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

  /** A GraphQL call that must succeed. */
  const mutate = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
    const answer = await graphql<Record<string, Loose>>(gateway.url, key, query, variables);
    expect(answer.errors).toBeUndefined();
    return answer.data as Record<string, Loose>;
  };

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
    const agentFilter = page.getByRole('combobox', { name: 'Agent', exact: true });
    await agentFilter.fill(agentA);
    await waitForRows(page, agentA, 3);
    await agentFilter.fill('');
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

  describe('names, the name filter, badges and a narrow screen', () => {
    let twinA: AgentId;
    let twinB: AgentId;
    let approvedId: string;
    let twinDeny: string;

    beforeAll(async () => {
      const tenant = gateway.tenant.id;
      twinA = await gateway.addAgent(tenant, { name: 'payments-bot' });
      twinB = await gateway.addAgent(tenant, { name: 'payments-bot' });
      // An operator key with a name of its own registers a server: the entry's actor.
      const created = await mutate(
        gateway.consoleKey,
        'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }',
        { i: { name: 'release-bot', scopes: ['policies:manage', 'approvals:decide'] } },
      );
      const releaseBot = created.createApiKey.secret as string;
      await mutate(
        releaseBot,
        'mutation { registerMcpServer(input: {serverId: "ledger", url: "http://127.0.0.1:9/mcp"}) { id } }',
      );
      const uri = await gateway.publishPolicy(tenant, HOLD_WIRES);
      await gateway.setPolicy(tenant, { trustedServers: ['files'], pinnedPolicies: [uri] });
      twinDeny = await deny(twinA);
      await deny(twinB);
      const held = await gateway.inspect(inspectBody(twinA, { tool: 'wire' }));
      expect(held.status).toBe(202);
      approvedId = (held.body.approval as { id: string }).id;
      await mutate(releaseBot, 'mutation($id: ID!) { approveApproval(id: $id) { id } }', {
        id: approvedId,
      });
    });

    /** The decision badges of the table: their label, and whether all of it shows. */
    const badgesOf = (page: Page) =>
      page.locator('table[aria-label="Audit entries"] .mantine-Badge-root').evaluateAll((roots) =>
        roots.map((root) => {
          const label = root.querySelector('.mantine-Badge-label') as HTMLElement;
          return {
            text: label.textContent,
            fits: root.scrollWidth <= root.clientWidth && label.scrollWidth <= label.clientWidth,
          };
        }),
      );

    const openTrail = async (page: Page) => {
      await signIn(page, gateway.url, gateway.consoleKey);
      const menu = page.getByRole('button', { name: 'Menu' });
      if (await menu.isVisible()) await menu.click();
      await page.getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('heading', { name: 'Audit trail', level: 2 }).waitFor();
    };

    it('shows names beside ids, filters by a shared name or a picked agent, fits its badges', async () => {
      const { page, errors } = await browser.newPage();
      await openTrail(page);
      const agent = (entry: Locator) => entry.locator('[data-column="agent"]');
      const actor = (entry: Locator) => entry.locator('[data-column="actor"]');
      const denied = row(page, twinDeny);
      await agent(denied).getByText('payments-bot', { exact: true }).waitFor();
      await agent(denied).getByText(twinA, { exact: true }).waitFor();
      const registered = rows(page).filter({ hasText: 'mcp_server.registered' }).first();
      await actor(registered).getByText('release-bot', { exact: true }).waitFor();
      const approved = rows(page).filter({ hasText: 'approval.approved' });
      await approved.getByText('approved', { exact: true }).waitFor();
      await actor(approved).getByText('release-bot', { exact: true }).waitFor();
      await agent(approved).getByText('payments-bot', { exact: true }).waitFor();

      // No badge is cut: each shows its whole label.
      const badges = await badgesOf(page);
      expect(new Set(badges.map((badge) => badge.text))).toEqual(
        new Set(['deny', 'held', 'approved']),
      );
      expect(badges.filter((badge) => !badge.fits)).toEqual([]);
      // Nor does the table need scrolling sideways at this width.
      const overflow = await page
        .getByRole('table', { name: 'Audit entries' })
        .evaluate((table) => {
          const viewport = table.closest('.mantine-ScrollArea-viewport') as HTMLElement;
          return viewport.scrollWidth - viewport.clientWidth;
        });
      expect(overflow).toBeLessThanOrEqual(0);

      // A name two agents share selects the entries of both, and says so.
      const agentFilter = page.getByRole('combobox', { name: 'Agent', exact: true });
      await agentFilter.fill('payments-bot');
      await page.getByText('2 agents have this name').waitFor();
      await waitForRows(page, 'payments-bot', 2);
      expect(await row(page, twinDeny).count()).toBe(1);
      // Picking one from the list narrows to it.
      await page
        .getByRole('option')
        .filter({ hasText: twinB.slice(0, 8) })
        .click();
      await waitForRows(page, twinB, 1);
      expect(await agentFilter.inputValue()).toBe('payments-bot');

      // The detail names the agent and gives its whole id to copy.
      await rows(page).first().getByRole('button').first().click();
      const drawer = page.getByRole('dialog');
      // The agent (the first named row), who is also the actor and the resource of a deny.
      await drawer.getByText('payments-bot', { exact: true }).first().waitFor();
      expect(await drawer.getByLabel('Agent id', { exact: true }).textContent()).toBe(twinB);
      await drawer.getByRole('button', { name: 'Copy Agent id' }).waitFor();
      expect(errors).toEqual([]);
    });

    it('at 390 px a row shows its time, decision and agent by name without scrolling', async () => {
      const { page, errors } = await browser.newPage();
      await page.setViewportSize({ width: 390, height: 844 });
      await openTrail(page);
      const denied = row(page, twinDeny);
      const cells = {
        time: denied.locator('[data-entry-time]'),
        decision: denied.getByText('deny', { exact: true }),
        agent: denied.locator('[data-column="agent"]').getByText('payments-bot', { exact: true }),
      };
      for (const [what, cell] of Object.entries(cells)) {
        await cell.waitFor();
        const box = await cell.boundingBox();
        expect(box, what).not.toBeNull();
        expect(box!.x, what).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width, what).toBeLessThanOrEqual(390);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        390,
      );
      expect((await badgesOf(page)).filter((badge) => !badge.fits)).toEqual([]);
      // What the table leaves out is in the row's detail.
      await cells.time.click();
      const drawer = page.getByRole('dialog');
      await drawer.getByRole('cell', { name: 'MCP_METHOD_BLOCKED' }).waitFor();
      await drawer.getByRole('cell', { name: 'inspect.deny' }).waitFor();
      expect(errors).toEqual([]);
    });
  });
});
