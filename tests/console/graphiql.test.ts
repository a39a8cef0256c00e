// GraphiQL as a person meets it: /graphql opened in Chromium leads to the console's sign-in and
// then GraphiQL, which runs a query over HTTP and a subscription over graphql-ws as the signed-in
// key. The browser is offline but for the gateway (every other request is aborted and recorded),
// and the page's strict CSP must not refuse anything.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../support/until.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: GraphiQL', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  async function graphqlAs(query: string, variables: Record<string, unknown>): Promise<void> {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${gateway.consoleKey}`,
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { errors?: unknown };
    expect(body.errors).toBeUndefined();
  }

  /**
   * The response pane's text: CodeMirror 5 renders the lines in view (the answers here are short),
   * indented with no-break spaces.
   */
  const responseText = async (page: Page) =>
    (await page.locator('.graphiql-response .CodeMirror-line').allTextContents())
      .join('\n')
      .replaceAll('\u00a0', ' ');

  it("the console's first page carries no GraphiQL code: its chunk loads with its screen", async () => {
    const html = await (await fetch(`${gateway.url}/console`)).text();
    const scripts = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, path] of scripts) {
      expect(await (await fetch(`${gateway.url}${path}`)).text(), path).not.toContain(
        'graphiql-container',
      );
    }
  });

  it('opens from /graphql, signs in, runs a query and a subscription, offline and within the CSP', async () => {
    const { page, context, errors } = await browser.newPage();
    const origin = new URL(gateway.url).origin;
    const foreign: string[] = [];
    await context.route('**', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort('internetdisconnected');
    });
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    // Recorded in the page before any of its scripts run (an init script is not subject to CSP).
    await context.addInitScript(() => {
      const seen: string[] = [];
      Object.defineProperty(window, '__cspViolations', { value: seen });
      document.addEventListener('securitypolicyviolation', (event) => {
        seen.push(`${event.effectiveDirective} ${event.blockedURI}`);
      });
    });
    const violations = () =>
      page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);

    const query = '{ me { tenant { name } } }';
    await page.goto(`${gateway.url}/graphql?query=${encodeURIComponent(query)}`);
    expect(new URL(page.url()).pathname).toBe('/console/graphiql');
    await page.getByLabel('API key').fill(gateway.consoleKey);
    await page.getByLabel('API key').press('Enter');
    const editor = page.locator('.graphiql-query-editor .CodeMirror-code');
    await editor.getByText('tenant').waitFor();
    await page.getByRole('button', { name: /^Execute query/ }).click();
    await page
      .locator('.graphiql-response .CodeMirror-line', { hasText: gateway.tenant.name })
      .waitFor();
    expect(JSON.parse(await responseText(page))).toEqual({
      data: { me: { tenant: { name: gateway.tenant.name } } },
    });
    // Introspection ran as the key too: the documentation explorer knows the schema.
    await page.getByRole('button', { name: /documentation explorer/i }).click();
    await page.locator('.graphiql-doc-explorer').getByText('Query').first().waitFor();

    // A link to a subscription: the tab is still signed in (sessionStorage); events stream in.
    const subscription = 'subscription { agentEvents(change: KILLED) { change } }';
    await page.goto(`${gateway.url}/graphql?query=${encodeURIComponent(subscription)}`);
    await editor.getByText('agentEvents').waitFor();
    await page.getByRole('button', { name: /^Execute query/ }).click();
    await page.getByRole('button', { name: /^Stop query/ }).waitFor();
    // Nothing says when the gateway has the subscription: kill agents until one streams in.
    await until(
      async () => {
        const agentId = await gateway.addAgent(gateway.tenant.id);
        await graphqlAs(
          'mutation ($id: ID!) { killAgent(agentId: $id, reason: "ide") { killId } }',
          {
            id: agentId,
          },
        );
        return responseText(page);
      },
      (text) => typeof text === 'string' && text.includes('KILLED'),
      'a kill streamed into GraphiQL',
    );

    expect(sockets.length).toBeGreaterThan(0);
    for (const socket of sockets) expect(new URL(socket).host).toBe(new URL(gateway.url).host);
    expect(foreign).toEqual([]);
    expect(await violations()).toEqual([]);
    expect(errors).toEqual([]);
  });
});
