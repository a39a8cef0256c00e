// The console as served by the gateway: strict CSP and no inline script, immutable hashed assets,
// the SPA's routes (an unknown one says so and links home), sign-in with an API key (Enter
// submits; kept in sessionStorage only) and sign-out, in Chromium against a real gateway.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

describeInBrowser('operator console: serving and sign-in', () => {
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

  it('serves index.html with a strict CSP, a fresh nonce and no inline script', async () => {
    const first = await fetch(`${gateway.url}/console`);
    const second = await fetch(`${gateway.url}/console/agents/some-id`);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const csp = first.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(first.headers.get('cache-control')).toBe('no-store');
    const html = await first.text();
    const nonce = /content="([^"]+)"/.exec(html.match(/<meta name="csp-nonce"[^>]*>/)?.[0] ?? '');
    expect(csp).toContain(`'nonce-${nonce?.[1]}'`);
    expect(second.headers.get('content-security-policy')).not.toBe(csp);
    // Every script is an external file of the build.
    for (const tag of html.match(/<script[^>]*>[\s\S]*?<\/script>/g) ?? []) {
      expect(tag).toMatch(/^<script[^>]* src="\/console\/assets\/[^"]+"[^>]*><\/script>$/);
    }
    const script = /src="\/console\/assets\/([^"]+\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${gateway.url}/console/assets/${script}`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const missing = await fetch(`${gateway.url}/console/assets/index-00000000.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { reasonCode: string }).reasonCode).toBe('NOT_FOUND');
    expect((await fetch(`${gateway.url}/console/a/b/c`)).status).toBe(404);
  });

  it('refuses a wrong key with a clear message and signs in on Enter with a good one', async () => {
    const { page, errors } = await browser.newPage();
    await page.goto(`${gateway.url}/console/`);
    await page.getByLabel('API key').fill('agk_not_a_real_key');
    await page.getByLabel('API key').press('Enter');
    await page.getByText('This API key was not accepted').waitFor();

    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByText(`Tenant ${gateway.tenant.name}`).waitFor();
    expect(page.url()).not.toContain(gateway.consoleKey);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain('agk_');
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).toContain(gateway.consoleKey);

    // A reload keeps the tab signed in (sessionStorage); sign-out forgets the key.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain('agk_');
    expect(errors).toEqual([]);
  });

  it('shows a not-found page with a link home at a path no screen has, and opens /console on Overview', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.waitForURL(`${gateway.url}/console/overview`);
    await page.goto(`${gateway.url}/console/nowhere`);
    await page.getByRole('heading', { name: 'Page not found', level: 2 }).waitFor();
    await page.getByText('The console has no page at /console/nowhere.').waitFor();
    expect(page.url()).toBe(`${gateway.url}/console/nowhere`);
    await page.getByRole('link', { name: 'Go to Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
    expect(page.url()).toBe(`${gateway.url}/console/overview`);
    expect(errors).toEqual([]);
  });

  it('follows the dark colour scheme of the system and switches on request', async () => {
    const { page } = await browser.newPage({ colorScheme: 'dark' });
    await signIn(page, gateway.url, gateway.consoleKey);
    const scheme = () => page.evaluate(() => document.documentElement.dataset.mantineColorScheme);
    expect(await scheme()).toBe('dark');
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    expect(await scheme()).toBe('light');
  });
});
