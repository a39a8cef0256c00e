// The Approvals screen against a real gateway in Chromium: a call held by an NPL REQUIRE_HUMAN rule
// appears without reload (its secret masked), is counted in the tab title and announced on the
// desktop; approving or rejecting it in the dialog decides the agent's resubmission; a key without
// approvals:decide is told what it lacks; the list is right again after the socket drops while
// someone else decides; a call held by a REQUIRE_HUMAN usage limit shows the limit and its usage,
// and the agent's page shows what each limit counted.
import { randomBytes } from 'node:crypto';
import type { Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { inspectBody } from '../support/gateway.js';
import { until } from '../support/until.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

const HOLD_POLICY = {
  version: '1.0.0',
  policyName: 'console-hold-deploys',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold_deploys',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'deploy'",
      alertSeverity: 'MEDIUM',
    },
  ],
};

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A GitHub-token-shaped string: `ghp_` and 36 alphanumerics. */
function githubToken(): string {
  return `ghp_${[...randomBytes(36)].map((byte) => ALPHANUMERIC[byte % 62]).join('')}`;
}

describeInBrowser('operator console: approvals', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  let policyUri: string;

  const deploy = (args: Record<string, unknown>, approvalId?: string) =>
    inspectBody(gateway.tenant.agentId, {
      tool: 'deploy',
      args,
      ...(approvalId === undefined ? {} : { approvalId }),
    });

  async function hold(args: Record<string, unknown>): Promise<string> {
    const { status, body } = await gateway.inspect(deploy(args));
    expect(status).toBe(202);
    return (body.approval as { id: string }).id;
  }

  /** Opens the Approvals screen and waits until its subscription is live on the gateway. */
  async function openQueue(page: Page): Promise<void> {
    const events = gateway.runtime.events;
    const before = events.subscriberCount;
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 2 }).waitFor();
    // The loader leaves once the first load answered (it renders with the heading).
    await page.getByLabel('Loading the queue').waitFor({ state: 'detached' });
    while (events.subscriberCount <= before) await new Promise((next) => setTimeout(next, 10));
  }

  const heldCard = (page: Page, text: string) =>
    page.getByRole('article', { name: 'Held call deploy' }).filter({ hasText: text });

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    policyUri = await gateway.publishPolicy(gateway.tenant.id, HOLD_POLICY);
    // The secret scan off as a blocking detector, so a call carrying a token reaches the rule that
    // holds it; the approval still shows it masked.
    await gateway.setPolicy(gateway.tenant.id, {
      trustedServers: ['files'],
      pinnedPolicies: [policyUri],
      exfilDetectSecrets: false,
    });
    // Desktop notifications: only the full browser has them (support.ts).
    browser = await launchConsoleBrowser({ desktopNotifications: true });
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('shows a held call live with its secret masked, counts it in the title, notifies, and approves it', async () => {
    const { page, context, errors } = await browser.newPage();
    await context.grantPermissions(['notifications'], { origin: gateway.url });
    // Records every desktop notification the page shows.
    await context.addInitScript(() => {
      const shown: string[] = [];
      const Native = window.Notification;
      class Recording extends Native {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          shown.push(`${title}: ${options?.body ?? ''}`);
        }
      }
      Object.assign(window, { Notification: Recording, shownNotifications: shown });
    });
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    await page.getByText('No call is waiting for a decision').waitFor();
    await page.getByText('Desktop notifications on').waitFor();
    const pageTitle = await page.title();

    const token = githubToken();
    const id = await hold({ target: 'production', token });
    const card = heldCard(page, 'production');
    await card.waitFor();
    await card.getByText('[secret: GitHub token]').waitFor();
    expect(await card.textContent()).toContain('hold_deploys');
    expect(await card.textContent()).toContain(policyUri);
    expect(await card.textContent()).toMatch(/expires in \d+:\d\d/);
    expect(await page.content()).not.toContain(token);
    await expect.poll(() => page.title()).toBe('(1) Approvals · Agent Gateway');
    const shown = () =>
      page.evaluate(() => (window as { shownNotifications?: string[] }).shownNotifications ?? []);
    await expect
      .poll(shown)
      .toEqual([
        expect.stringMatching(/^A call is waiting for approval: .+ wants deploy on files$/),
      ]);

    await card.getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve deploy?' });
    await dialog.getByLabel('Reason (optional)').fill('release window');
    await dialog.getByRole('button', { name: 'Confirm approval' }).click();
    await page.getByText('Call approved').waitFor();
    await card.waitFor({ state: 'detached' });
    await page.getByText('No call is waiting for a decision').waitFor();
    await expect.poll(() => page.title()).toBe(pageTitle);

    const resubmitted = await gateway.inspect(deploy({ target: 'production', token }, id));
    expect(resubmitted.status).toBe(200);
    expect(resubmitted.body.decision).toBe('allow');
    expect(errors).toEqual([]);
  });

  it('rejects with a reason, which refuses the resubmission; an already decided call shows the API error', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    // Permission is asked only on request.
    await page.getByRole('button', { name: 'Enable desktop notifications' }).waitFor();

    const id = await hold({ target: 'staging' });
    const card = heldCard(page, 'staging');
    await card.getByRole('button', { name: 'Reject' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reject deploy?' });
    await dialog.getByRole('button', { name: 'Confirm rejection' }).click();
    await dialog.getByText('Say why the call is rejected.').waitFor();
    await dialog.getByRole('textbox', { name: 'Reason' }).fill('not during the freeze');
    await dialog.getByRole('button', { name: 'Confirm rejection' }).click();
    await page.getByText('Call rejected').waitFor();
    await card.waitFor({ state: 'detached' });

    const resubmitted = await gateway.inspect(deploy({ target: 'staging' }, id));
    expect(resubmitted.status).toBe(403);
    expect(resubmitted.body.reasonCode).toBe('APPROVAL_REJECTED');
    const read = await graphql<{ approval: { decisionReason: string } }>(
      gateway.url,
      gateway.consoleKey,
      'query($id: ID!) { approval(id: $id) { decisionReason } }',
      { id },
    );
    expect(read.data?.approval.decisionReason).toBe('not during the freeze');

    // Someone else approves while the dialog is open: the dialog shows the API's refusal.
    const other = await hold({ target: 'qa' });
    const otherCard = heldCard(page, 'qa');
    await otherCard.getByRole('button', { name: 'Approve' }).click();
    const approveDialog = page.getByRole('dialog', { name: 'Approve deploy?' });
    await approveDialog.waitFor();
    await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation($id: ID!) { approveApproval(id: $id) { id } }',
      {
        id: other,
      },
    );
    await otherCard.waitFor({ state: 'detached' });
    await approveDialog.getByRole('button', { name: 'Confirm approval' }).click();
    const alert = approveDialog.getByRole('alert');
    await alert.getByText('REQUEST_INVALID').waitFor();
    expect(await alert.textContent()).toContain('only a pending approval can be decided');
    expect(errors).toEqual([]);
  });

  it('shows an auditor (audit:read, no approvals:decide) the held call, with no decision button', async () => {
    const key = await gateway.addApiKey(gateway.tenant.id, ['audit:read', 'agents:manage']);
    await hold({ target: 'watched' });
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 2 }).waitFor();
    // The queue is readable with audit:read; deciding needs approvals:decide.
    await heldCard(page, 'watched').waitFor();
    await page.getByText('You can watch, not decide').waitFor();
    expect(await page.getByRole('main').textContent()).toContain(
      'Your API key lacks the approvals:decide scope',
    );
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Reject/ }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('tells a key with neither scope what it lacks', async () => {
    const key = await gateway.addApiKey(gateway.tenant.id, ['agents:manage']);
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByText('Not allowed with this key').waitFor();
    expect(await page.getByRole('main').textContent()).toContain(
      'Your API key lacks the approvals:decide or audit:read scope',
    );
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  // Issue 25 item 3: the approval lives 15 minutes, a client waits for it far less; the card says
  // whether deciding now reaches a waiting client, live, as clients come and go.
  it('shows whether a client is still waiting for the decision, and until when', async () => {
    const id = await hold({ target: 'waited-for' });
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    const card = heldCard(page, 'waited-for');
    // Held over REST: the agent got its 202 and nobody waits.
    await card
      .getByText(/No client waiting: the agent will see the decision when it retries/)
      .waitFor();

    // The agent long-polls the approval: the card counts down its wait.
    const poll = new AbortController();
    const polling = fetch(`${gateway.url}/api/v1/mcp/gateway/approvals/${id}?wait=30`, {
      headers: { authorization: `Bearer ${gateway.tenant.key}` },
      signal: poll.signal,
    }).catch(() => undefined);
    await card.getByText(/Agent waiting — 0:[0-3]\d left/).waitFor();

    // The agent goes away: the wait ends and the card says so, without a reload.
    poll.abort();
    await polling;
    await card.getByText(/No client waiting/).waitFor();
    expect(errors).toEqual([]);
  });

  // The page's clock is the test's (the call keeps its real lifetime): it stops in the call's
  // last seconds, then at its end, so nothing waits for a real TTL or races a busy machine.
  it('drops a call from the list when its time runs out', async () => {
    const id = await hold({ target: 'lapsing' });
    const read = await graphql<{ approval: { expiresAt: string } }>(
      gateway.url,
      gateway.consoleKey,
      'query($id: ID!) { approval(id: $id) { expiresAt } }',
      { id },
    );
    const expiresAt = Date.parse(read.data?.approval.expiresAt as string);
    const { page, errors } = await browser.newPage();
    await page.clock.install();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    const card = heldCard(page, 'lapsing');
    await card.getByText(/^expires in \d+:\d\d$/).waitFor();
    await page.clock.pauseAt(expiresAt - 5_000);
    await card.getByText('expires in 0:05').waitFor();
    await page.clock.pauseAt(expiresAt);
    await card.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('is right again after the socket drops while someone else decides', async () => {
    const { page, errors } = await browser.newPage();
    // The page's sockets pass through the test, which can drop them and refuse new ones.
    let refusing = false;
    const open: WebSocketRoute[] = [];
    let connections = 0;
    await page.routeWebSocket(/\/graphql$/, (route) => {
      if (refusing) {
        void route.close({ code: 1012, reason: 'test: gateway unreachable' });
        return;
      }
      connections += 1;
      route.connectToServer();
      open.push(route);
    });
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    const decidedElsewhere = await hold({ target: 'decided-offline' });
    const stale = heldCard(page, 'decided-offline');
    await stale.waitFor();
    expect(connections).toBe(1);

    refusing = true;
    for (const route of open.splice(0)) await route.close({ code: 1012, reason: 'test: drop' });
    await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation($id: ID!) { approveApproval(id: $id) { id } }',
      { id: decidedElsewhere },
    );
    await hold({ target: 'held-offline' });
    // The page has heard of neither.
    expect(await stale.count()).toBe(1);
    expect(await heldCard(page, 'held-offline').count()).toBe(0);

    refusing = false;
    await heldCard(page, 'held-offline').waitFor();
    await stale.waitFor({ state: 'detached' });
    expect(connections).toBe(2);

    // Leaving the screen (here: signing out) gives the page its own title back.
    await expect.poll(() => page.title()).toMatch(/^\(\d+\) Approvals · Agent Gateway$/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await expect.poll(() => page.title()).toBe('Agent Gateway console');
    expect(errors).toEqual([]);
  });

  it("shows the usage limit that held a call, and the agent's usage of each limit", async () => {
    const agentId = gateway.tenant.agentId;
    await gateway.setPolicy(gateway.tenant.id, {
      limits: [
        {
          limitId: 'payments',
          per: 'AGENT',
          tools: ['pay'],
          servers: [],
          windowSeconds: 86_400,
          maxCalls: null,
          sumArgument: 'amount',
          maxSum: 100,
          action: 'REQUIRE_HUMAN',
        },
        {
          limitId: 'searches',
          per: 'AGENT_TOOL',
          tools: ['search*'],
          servers: [],
          windowSeconds: 3600,
          maxCalls: 5,
          sumArgument: null,
          maxSum: null,
          action: 'DENY',
        },
      ],
    });
    const call = (tool: string, args: Record<string, unknown> = {}, approvalId?: string) =>
      gateway.inspect(
        inspectBody(agentId, { tool, args, ...(approvalId === undefined ? {} : { approvalId }) }),
      );
    for (const tool of ['search_docs', 'search_docs', 'search_web']) {
      expect((await call(tool, { q: 'x' })).status).toBe(200);
    }
    expect((await call('pay', { amount: 60 })).status).toBe(200);
    const held = await call('pay', { amount: 60 });
    expect(held.status).toBe(202);
    expect(held.body.reasonCode).toBe('LIMIT_REQUIRE_HUMAN');

    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await openQueue(page);
    const card = page.getByRole('article', { name: 'Held call pay' });
    await card.getByText('Held by usage limit').waitFor();
    const text = await card.textContent();
    expect(text).toContain('payments');
    expect(text).toContain('per agent, a 1 day window');
    expect(text).toContain('60 / 100');
    expect(text).toContain('which adds 60: 120 of 100 with it');
    expect(text).not.toContain('Held by rule');
    await card.getByRole('progressbar', { name: 'payments used: 60 of 100' }).waitFor();

    // Call counts reach the database in batches: wait for the data plane's flush, then look.
    await until(
      () =>
        graphql<{ agent: { usage: { toolName: string | null; calls: number }[] } }>(
          gateway.url,
          gateway.consoleKey,
          'query($id: ID!) { agent(id: $id) { usage { toolName calls } } }',
          { id: agentId },
        ),
      (answer) =>
        answer.data?.agent.usage.find((row) => row.toolName === 'search_docs')?.calls === 2 &&
        answer.data.agent.usage.find((row) => row.toolName === 'search_web')?.calls === 1,
      'Agent.usage counts the search calls',
    );
    await page.goto(`${gateway.url}/console/agents/${agentId}`);
    const usage = page.getByRole('table', { name: 'Usage limits' });
    const row = (text: string) => usage.getByRole('row').filter({ hasText: text });
    await row('payments').getByText('60 / 100').waitFor();
    expect(await row('payments').textContent()).toContain('per agent');
    await row('search_docs').getByText('2 / 5').waitFor();
    await row('search_web').getByText('1 / 5').waitFor();
    expect(await row('search_docs').textContent()).toContain('per agent and tool');
    await usage
      .getByRole('progressbar', { name: 'searches on search_docs calls: 2 of 5' })
      .waitFor();
    // When the day's window ends, as the browser writes a time.
    const resetsAt = new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000).toISOString();
    const resetText = await page.evaluate((iso) => new Date(iso).toLocaleString(), resetsAt);
    expect(await row('payments').getByRole('cell').last().textContent()).toContain(resetText);

    // Approved, the resubmission passes and counts past the maximum: the page shows it on Refresh.
    await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation($id: ID!) { approveApproval(id: $id) { id } }',
      { id: (held.body.approval as { id: string }).id },
    );
    expect(
      (await call('pay', { amount: 60 }, (held.body.approval as { id: string }).id)).status,
    ).toBe(200);
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await row('payments').getByText('120 / 100').waitFor();
    expect(errors).toEqual([]);
  });
});
