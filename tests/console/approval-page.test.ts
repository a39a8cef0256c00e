// The approval page, /console/approvals/<id>, in Chromium against a real gateway, reached as an MCP
// client's user reaches it: from the link the gateway sends when a call is held (issue 28, §1).
// - 2026-07-28, a client with URL elicitation (the official SDK v2): its elicitation handler gets
//   the page; the user opens it signed out, signs in, lands on the approval and approves it; the
//   SDK's automatic retry gets the upstream's result (one upstream call); the page says approved,
//   and then used;
// - 2026-07-28, a client without URL elicitation: -32021 carries the page; rejected there with a
//   reason, the retry with the given requestState is the deny;
// - 2025-11-25, a session client with URL elicitation (the official SDK 1.x): the page arrives as
//   an elicitation/create while the call waits, and approving on it completes the same call;
// - the page updates live when the approval is decided elsewhere; an unknown id is named as such.
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { HOLD_ECHO_POLICY } from '../mcp-proxy/support.js';
import {
  apiKeyHeaders,
  mcpFetch,
  statelessHeaders,
  statelessRequest,
} from '../mcp-proxy/transport-support.js';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';
import { type McpV2Upstream, startMcpV2Upstream } from '../support/mcp-v2-upstream.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: one approval’s page, from an MCP client’s link', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;
  let modern: McpV2Upstream;
  let legacy: McpUpstream;

  beforeAll(async () => {
    modern = await startMcpV2Upstream({ legacy: 'reject' });
    legacy = await startMcpUpstream({ responseMode: 'sse', stateful: true });
    gateway = await startConsoleGateway();
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'modern', url: modern.url });
    await gateway.registerServer({ tenantId, serverId: 'legacy', url: legacy.url });
    const uri = await gateway.publishPolicy(tenantId, HOLD_ECHO_POLICY);
    await gateway.setPolicy(tenantId, {
      trustedServers: ['modern', 'legacy'],
      pinnedPolicies: [uri],
    });
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await modern?.close();
    await legacy?.close();
  });

  const agentHeaders = async () =>
    apiKeyHeaders(
      gateway.tenant.key,
      await gateway.addAgent(gateway.tenant.id, { allowedTools: ['echo'] }),
    );

  /** Opens the link signed out, signs in on the form it shows, and waits for the approval. */
  async function openSignedOut(page: Page, link: string): Promise<void> {
    await page.goto(link);
    await page.getByLabel('API key').fill(gateway.consoleKey);
    await page.getByLabel('API key').press('Enter');
    await page.getByRole('heading', { name: /^Approval / }).waitFor();
  }

  async function decideOnPage(page: Page, decision: 'Approve' | 'Reject', reason?: string) {
    const card = page.getByRole('article', { name: /^Held call echo/ });
    await card.getByRole('button', { name: decision }).click();
    const dialog = page.getByRole('dialog', { name: `${decision} echo?` });
    if (reason !== undefined) await dialog.getByLabel('Reason').fill(reason);
    await dialog
      .getByRole('button', {
        name: decision === 'Approve' ? 'Confirm approval' : 'Confirm rejection',
      })
      .click();
  }

  it('2026-07-28 with URL elicitation: the SDK’s handler gets the page, approved there, its retry gets the result', async () => {
    const { page } = await browser.newPage();
    const client = new V2Client(
      { name: 'console-approval', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        capabilities: { elicitation: { url: {} } },
      },
    );
    const links: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const link = String((request.params as { url?: string }).url);
      links.push(link);
      await openSignedOut(page, link);
      await page.getByText('Waiting for a decision').waitFor();
      await decideOnPage(page, 'Approve');
      await page.getByText('Approved by').waitFor();
      await page.getByText('You may return to the agent').waitFor();
      return { action: 'accept' };
    });
    await client.connect(
      new V2Transport(new URL(`${gateway.url}/mcp/modern`), {
        requestInit: { headers: await agentHeaders() },
      }),
    );
    try {
      const before = modern.calls.get('echo') ?? 0;
      const result = await client.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      expect(result.content).toEqual([{ type: 'text', text: 'needs-human' }]);
      expect(modern.calls.get('echo')).toBe(before + 1);
      expect(links).toEqual([expect.stringMatching(/\/console\/approvals\/[^/]+$/)]);
      // The page hears that the approval was used.
      await page.getByText('The agent has made the call.').waitFor();
    } finally {
      await client.close();
    }
  });

  it('2026-07-28 without URL elicitation: -32021 names the page; rejected there, the retry is the deny', async () => {
    const { page } = await browser.newPage();
    const headers = await agentHeaders();
    const send = (body: ReturnType<typeof statelessRequest>) =>
      mcpFetch(`${gateway.url}/mcp/modern`, {
        body,
        headers: { ...headers, ...statelessHeaders(body) },
      });
    const call = (id: string, extra: Record<string, unknown> = {}) =>
      statelessRequest(
        'tools/call',
        { name: 'echo', arguments: { text: 'needs-human' }, ...extra },
        id,
      );
    const held = await send(call('n1'));
    expect(held.status).toBe(400);
    expect(held.body.error.code).toBe(-32021);
    const { url, requestState } = held.body.error.data;
    await openSignedOut(page, url);
    await decideOnPage(page, 'Reject', 'not in the release window');
    await page.getByText('Rejected by').waitFor();
    await page.getByText('not in the release window').waitFor();
    const before = modern.calls.get('echo') ?? 0;
    const denied = await send(call('n2', { requestState }));
    expect(denied.body.error).toMatchObject({
      code: -32001,
      data: { reasonCode: 'APPROVAL_REJECTED' },
    });
    expect(modern.calls.get('echo') ?? 0).toBe(before);
  });

  it('2025-11-25 with URL elicitation: the page arrives while the call waits, and approving it there completes the call', async () => {
    const { page } = await browser.newPage();
    const client = new Client(
      { name: 'console-approval-session', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      await openSignedOut(page, String((request.params as { url?: string }).url));
      await decideOnPage(page, 'Approve');
      await page.getByText('Approved by').waitFor();
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/legacy`), {
        requestInit: { headers: await agentHeaders() },
      }),
    );
    try {
      const before = legacy.calls.get('echo') ?? 0;
      const result = await client.callTool({ name: 'echo', arguments: { text: 'needs-human' } });
      expect(result.structuredContent).toEqual({ text: 'needs-human' });
      expect(legacy.calls.get('echo')).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('2025-11-25 without URL elicitation: the progress message names the page, and approving there completes the call', async () => {
    const { page } = await browser.newPage();
    const client = new Client({ name: 'console-approval-plain', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/legacy`), {
        requestInit: { headers: await agentHeaders() },
      }),
    );
    let opened: Promise<void> | undefined;
    try {
      const before = legacy.calls.get('echo') ?? 0;
      const result = await client.callTool(
        { name: 'echo', arguments: { text: 'needs-human' } },
        undefined,
        {
          onprogress: (update) => {
            const link = /https?:\/\/\S+\/console\/approvals\/[^\s,)]+/.exec(
              update.message ?? '',
            )?.[0];
            if (link === undefined || opened !== undefined) return;
            opened = (async () => {
              await openSignedOut(page, link);
              await decideOnPage(page, 'Approve');
              await page.getByText('Approved by').waitFor();
            })();
          },
        },
      );
      await opened;
      expect(result.structuredContent).toEqual({ text: 'needs-human' });
      expect(legacy.calls.get('echo')).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it('updates live when decided elsewhere, and names an id the tenant has no approval under', async () => {
    const { page } = await browser.newPage();
    const headers = await agentHeaders();
    const body = statelessRequest(
      'tools/call',
      { name: 'echo', arguments: { text: 'needs-human' } },
      'l1',
    );
    const held = await mcpFetch(`${gateway.url}/mcp/modern`, {
      body,
      headers: { ...headers, ...statelessHeaders(body) },
    });
    const { url, approvalId } = held.body.error.data;
    const events = gateway.runtime.events;
    const before = events.subscriberCount;
    await openSignedOut(page, url);
    await page.getByText('Waiting for a decision').waitFor();
    // The page's subscription is live on the gateway before the decision is made elsewhere.
    await expect
      .poll(() => events.subscriberCount, { timeout: 30_000, interval: 20 })
      .toBeGreaterThan(before);
    const answer = await graphql(
      gateway.url,
      gateway.consoleKey,
      'mutation($id: ID!) { rejectApproval(id: $id, reason: "decided elsewhere") { status } }',
      { id: approvalId },
    );
    expect(answer.errors).toBeUndefined();
    await page.getByText('Rejected by').waitFor();
    await page.getByText('decided elsewhere').waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    await page.goto(`${gateway.url}/console/approvals/no-such-approval`);
    await page.getByText('No such approval').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('no-such-approval');
    // `%25` is a lone `%` once the router decoded the path: still "no such approval", not a
    // blank page (decoding it again threw).
    await page.goto(`${gateway.url}/console/approvals/100%25`);
    await page.getByText('No such approval').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('100%');
  });
});
