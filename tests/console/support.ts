// Browser tests of the operator console: Debian's Chromium (never a downloaded browser) driven by
// playwright-core, against a real gateway started by the test, serving the built console
// (web-console/dist, which `npm test` and `npm install` build). Two builds of the same Chromium
// (Debian's `chromium` and `chromium-headless-shell` packages, one version): the headless shell,
// Chromium's own headless build and Playwright's default for headless runs, costs half the CPU a
// signed-in page costs in the full browser (docs/PERFORMANCE.md), so every file uses it but those
// that need what only the full browser has (desktop notifications: approvals.test.ts). Without
// the full browser the browser tests are skipped with a visible message, and without the shell
// every file uses the full browser; under CI=true either absence is an error (PLATFORM.md).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe } from 'vitest';
import { REPO_ROOT } from '../support/cli-process.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HEADLESS_SHELL_PATH =
  process.env.CHROMIUM_HEADLESS_SHELL_PATH ?? '/usr/bin/chromium-headless-shell';
export const hasChromium = existsSync(CHROMIUM_PATH);
const hasHeadlessShell = existsSync(HEADLESS_SHELL_PATH);
const consoleIndex = join(REPO_ROOT, 'web-console', 'dist', 'index.html');

if (!hasChromium || !hasHeadlessShell) {
  if (process.env.CI === 'true') {
    throw new Error(
      `CI=true but ${hasChromium ? HEADLESS_SHELL_PATH : CHROMIUM_PATH} is missing: the console's browser tests must run (apt-get install chromium chromium-headless-shell)`,
    );
  }
  console.warn(
    hasChromium
      ? `${HEADLESS_SHELL_PATH} is missing: the console's browser tests use the full browser, at twice the CPU (apt-get install chromium-headless-shell).`
      : `${CHROMIUM_PATH} is missing: the console's browser tests are SKIPPED (apt-get install chromium chromium-headless-shell).`,
  );
}
if (!existsSync(consoleIndex)) {
  throw new Error(`${consoleIndex} is missing: run \`npm run build:console\` before these tests`);
}

/**
 * `describe` that runs only where Chromium is installed, with room for a browser's start and a
 * busy machine (an upper bound: every step waits for an element or an event).
 */
export function describeInBrowser(name: string, body: () => void): void {
  (hasChromium ? describe : describe.skip)(name, { timeout: 120_000 }, body);
}

/** PLATFORM.md's flags: headless, and no background traffic to a closed network. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ConsoleBrowser {
  readonly browser: Browser;
  /** A fresh context (its own sessionStorage) and page; CSP violations and page errors recorded. */
  newPage(options?: { colorScheme?: 'light' | 'dark' }): Promise<ConsolePage>;
  close(): Promise<void>;
}

export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors (a CSP violation is one) and uncaught exceptions of the page. */
  readonly errors: string[];
}

/**
 * Launches the headless shell, or the full browser when `desktopNotifications` (the shell has no
 * Notification API) or when the shell is not installed.
 */
export async function launchConsoleBrowser(
  options: { desktopNotifications?: boolean } = {},
): Promise<ConsoleBrowser> {
  const executablePath =
    options.desktopNotifications === true || !hasHeadlessShell
      ? CHROMIUM_PATH
      : HEADLESS_SHELL_PATH;
  // launch() gives the browser a new empty profile directory of its own, removed on close.
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: { width: 1366, height: 820 },
        colorScheme: options.colorScheme ?? 'light',
      });
      // An upper bound for a broken page, not a pace: every wait is for an element or a request.
      context.setDefaultTimeout(30_000);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        // A refused request (a wrong key's 401) is an answer the app handles, not a page error.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
          errors.push(message.text());
        }
      });
      page.on('pageerror', (error) => errors.push(error.message));
      return { page, context, errors };
    },
    async close() {
      await browser.close();
    },
  };
}

/** A gateway whose first tenant has a console key with every tenant scope. */
export interface ConsoleGateway extends TestGateway {
  readonly consoleKey: string;
}

export const OPERATOR_SCOPES = [
  'agents:execute',
  'agents:manage',
  'agents:kill',
  'policies:manage',
  'approvals:decide',
  'audit:read',
  'keys:manage',
];

export async function startConsoleGateway(
  options: Parameters<typeof startTestGateway>[1] = {},
): Promise<ConsoleGateway> {
  const gateway = await startTestGateway('pglite', options);
  const consoleKey = await gateway.addApiKey(gateway.tenant.id, OPERATOR_SCOPES);
  return Object.assign(gateway, { consoleKey });
}

/** Opens /console and signs in with `key` (typed, then Enter: the form submits on Enter). */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
