/// <reference lib="dom" />
// The operator console's weight and speed (issue 16): the JavaScript the approvals screen loads
// (bytes on the wire, gzip, and decoded) and its time to interactive — from navigation until the
// first held call's Approve button can be clicked — in Debian's Chromium against a gateway as
// `npm start` serves it (the built console, gzip, immutable assets), with 5 held calls queued.
// Cold: a new browser context each time (empty cache); warm: a reload in the same context (the
// hashed assets come from the cache, the page and the data from the gateway).
// The reference of the same run is the sign-in page's own time to interactive (the same bundle,
// no data): what the approvals screen adds over it is its queries and rendering.
import type { Page } from 'playwright-core';
import { hasChromium, launchConsoleBrowser, startConsoleGateway } from '../console/support.js';
import { inspectBody } from '../support/gateway.js';
import { percentile } from './measure.js';
import type { BenchContext } from './run.js';

const RUNS = 20;
const HOLD = `version: "1.0.0"
policyName: bench-hold
targetAgents: ["*"]
rules:
  - ruleId: hold_wires
    action: REQUIRE_HUMAN
    condition: tool.name == 'wire'
    alertSeverity: MEDIUM
`;

const ms = (value: number) => value.toFixed(0);

/** Milliseconds from navigation start until `ready` holds in the page (checked every frame). */
async function timeTo(page: Page, url: string, ready: () => boolean): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(ready, undefined, { polling: 'raf', timeout: 60_000 });
  return page.evaluate(() => performance.now());
}

// Functions, not strings: the console's CSP forbids evaluating strings in the page.
const APPROVE_READY = () =>
  [...document.querySelectorAll('button')].some(
    (b) => /^Approve/.test(b.textContent ?? '') && !b.disabled && b.offsetParent !== null,
  );
const SIGN_IN_READY = () => {
  const input = document.querySelector<HTMLInputElement>('input[type=password]');
  return input !== null && !input.disabled && input.offsetParent !== null;
};

export default async function consoleBench(ctx: BenchContext): Promise<void> {
  if (!hasChromium) {
    ctx.progress('/usr/bin/chromium is missing: the console benchmark is SKIPPED');
    return;
  }
  const gateway = await startConsoleGateway();
  const { tenant } = gateway;
  const uri = await gateway.publishPolicy(tenant.id, HOLD);
  await gateway.setPolicy(tenant.id, { trustedServers: ['files'], pinnedPolicies: [uri] });
  for (let i = 0; i < 5; i++) {
    await gateway.inspect(inspectBody(tenant.agentId, { tool: 'wire', args: { amount: i } }));
  }
  const browser = await launchConsoleBrowser();
  const key = gateway.consoleKey;
  try {
    // Bytes: every script the approvals screen loads, as sent (gzip) and decoded.
    const { page, context } = await browser.newPage();
    const loads: Promise<{ file: string; wire: number; decoded: number }>[] = [];
    page.on('response', (response) => {
      if (!response.url().endsWith('.js')) return;
      loads.push(
        (async () => ({
          file: response.url().split('/').pop() ?? '',
          wire: (await response.request().sizes()).responseBodySize,
          decoded: (await response.body()).length,
        }))(),
      );
    });
    await context.addInitScript(
      (apiKey) => sessionStorage.setItem('agent-gateway.console.api-key', apiKey),
      key,
    );
    await timeTo(page, `${gateway.url}/console/approvals`, APPROVE_READY);
    await page.waitForLoadState('networkidle');
    const scripts = await Promise.all(loads);
    const kib = (bytes: number) => (bytes / 1024).toFixed(1);
    ctx.report('console: JavaScript loaded by the approvals screen', [
      ...scripts
        .sort((a, b) => b.decoded - a.decoded)
        .map((script) => ({
          script: script.file,
          'on the wire (gzip) KiB': kib(script.wire),
          'decoded KiB': kib(script.decoded),
        })),
      {
        script: `all ${scripts.length}`,
        'on the wire (gzip) KiB': kib(scripts.reduce((sum, script) => sum + script.wire, 0)),
        'decoded KiB': kib(scripts.reduce((sum, script) => sum + script.decoded, 0)),
      },
    ]);
    await context.close();

    const cold: number[] = [];
    const warm: number[] = [];
    const reference: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      ctx.progress(`console: run ${run + 1}/${RUNS}`);
      const signedIn = await browser.newPage();
      await signedIn.context.addInitScript(
        (apiKey) => sessionStorage.setItem('agent-gateway.console.api-key', apiKey),
        key,
      );
      cold.push(await timeTo(signedIn.page, `${gateway.url}/console/approvals`, APPROVE_READY));
      warm.push(await timeTo(signedIn.page, `${gateway.url}/console/approvals`, APPROVE_READY));
      await signedIn.context.close();
      const anonymous = await browser.newPage();
      reference.push(await timeTo(anonymous.page, `${gateway.url}/console/`, SIGN_IN_READY));
      await anonymous.context.close();
    }
    ctx.report('console: time to interactive (ms from navigation start)', [
      {
        page: 'approvals, cold cache',
        p50: ms(percentile(cold, 50)),
        p95: ms(percentile(cold, 95)),
      },
      {
        page: 'approvals, warm cache',
        p50: ms(percentile(warm, 50)),
        p95: ms(percentile(warm, 95)),
      },
      {
        page: 'reference: sign-in page, cold cache',
        p50: ms(percentile(reference, 50)),
        p95: ms(percentile(reference, 95)),
      },
    ]);
  } finally {
    await browser.close();
    await gateway.close();
  }
}
