// The README's quickstart, run as a new user runs it: every command of its code blocks, in order,
// as child processes (`npm start` included, on the embedded database in a data directory of the
// test's own), and the console steps in Chromium: sign in with the key `cat` printed, see the
// denied call in the audit trail, approve the held one and watch the agent's call complete.
// The list of commands is read from README.md, so changing the quickstart without this test fails.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli-process.js';
import { type ConsoleBrowser, describeInBrowser, launchConsoleBrowser, signIn } from './support.js';

/** The shell commands of the README's quickstart section, in order. */
function quickstartCommands(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## ').find((part) => part.startsWith('Quickstart'));
  if (!section) throw new Error('README.md has no "## Quickstart" section');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    (block[1] ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== ''),
  );
}

interface Command {
  readonly child: ChildProcess;
  readonly output: string[];
  /** Resolves with the first output line matching `pattern` (lines seen before count). */
  line(pattern: RegExp): Promise<string>;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];

function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Command {
  // Its own process group, so `npm start` and the node it starts stop together.
  const child = spawn('sh', ['-c', command], {
    cwd,
    env: { ...process.env, CI: '', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  const output: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onChunk = (() => {
    let rest = '';
    return (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.pattern.test(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    };
  })();
  child.stdout?.on('data', onChunk);
  child.stderr?.on('data', onChunk);
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return {
    child,
    output,
    exited,
    line(pattern) {
      const seen = output.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then((code) =>
          reject(new Error(`"${command}" exited ${code} before ${pattern}:\n${output.join('\n')}`)),
        );
      });
    },
  };
}

describeInBrowser('the README quickstart', () => {
  let dir: string;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quickstart-'));
    browser = await launchConsoleBrowser();
  });
  afterAll(async () => {
    for (const child of started) {
      if (child.exitCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {}
      }
    }
    await Promise.all(
      started.map((child) => (child.exitCode === null ? once(child, 'close') : null)),
    );
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('takes a new user from npm start to a denied call in the audit trail and an approved one', async () => {
    const commands = quickstartCommands();
    expect(commands).toEqual([
      'npm install && npm start',
      'node client/examples/quickstart/server.mjs',
      'cat data/admin-api-key',
      'node client/examples/quickstart/setup.mjs',
      'node client/examples/quickstart/agent.mjs',
    ]);
    // `npm install` has run (this suite runs after it); the rest runs as written, with only the
    // ports and the data directory moved out of the way of a gateway the user may be running.
    expect(existsSync(join(REPO_ROOT, 'node_modules'))).toBe(true);
    const base = { AGENT_GATEWAY_DATA_DIR: join(dir, 'data') };

    const gateway = run(commands[0]!.replace('npm install && ', ''), REPO_ROOT, {
      ...base,
      AGENT_GATEWAY_PORT: '0',
    });
    const ready = JSON.parse(await gateway.line(/"msg":"ready"/)) as { url: string };
    const url = ready.url;

    const server = run(commands[1]!, REPO_ROOT, { QUICKSTART_PORT: '0' });
    const serverUrl = (await server.line(/quickstart MCP server: /)).split(': ')[1]!;

    // `cat data/admin-api-key`, from the folder holding the data directory.
    const cat = run(commands[2]!, dir, {});
    expect(await cat.exited).toBe(0);
    const adminKey = cat.output[0]!.trim();
    expect(adminKey).toMatch(/^agk_/);

    const env = { ...base, GATEWAY_URL: url, QUICKSTART_PORT: new URL(serverUrl).port };
    const setup = run(commands[3]!, REPO_ROOT, env);
    expect(await setup.exited, setup.output.join('\n')).toBe(0);
    expect(setup.output.join('\n')).toContain('published and pinned svc://quickstart-guard@1.0.0');

    const agent = run(commands[4]!, REPO_ROOT, env);
    await agent.line(/^spawned agent quickstart-agent /);
    await agent.line(/^tools: search_docs, export_customers, send_payment$/);
    await agent.line(/^search_docs: 3 pages mention "expenses"$/);
    await agent.line(/^export_customers: denied NPL_POLICY_BLOCK \(rule no_customer_exports\)$/);
    await agent.line(/held for approval/);

    const { page, errors } = await browser.newPage();
    await signIn(page, url, adminKey);
    // The denied call is in the audit trail.
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByText('NPL_POLICY_BLOCK').first().waitFor();
    // The held call is on the approvals screen; approving it lets the agent's call complete.
    await page.getByRole('link', { name: 'Approvals' }).click();
    const card = page.getByRole('article', { name: /^Held call send_payment/ });
    await card.getByText('"amount": 250').waitFor();
    await card.getByRole('button', { name: 'Approve' }).click();
    await page
      .getByRole('dialog', { name: 'Approve send_payment?' })
      .getByRole('button', { name: 'Confirm approval' })
      .click();
    await agent.line(/^send_payment: paid 250 to acme$/);
    expect(await agent.exited).toBe(0);
    expect(errors).toEqual([]);
  });
});
