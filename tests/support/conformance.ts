// The official MCP conformance suite (@modelcontextprotocol/conformance, its CLI) run against an
// MCP server URL, and the reference server to run it against (conformance-reference-server.ts,
// our own server of what the scenarios exercise: the conformance package ships only its CLI). The
// MCP proxy's transparency proof: every server scenario that passes against the reference server
// directly must pass through /mcp/{serverId} too.
//
//   const upstream = await startConformanceUpstream();
//   const results = await runServerScenarios(upstream.url);   // Map<scenario, { passed, detail }>
//   await upstream.close();
//
// The CLI runs in a child process (process.execPath on the installed package's bin, never npx):
// `conformance server --url <url> --suite all -o <dir>` runs each scenario one after another
// (pending ones included) and writes `<dir>/server-<scenario>-<timestamp>/checks.json`; a scenario
// passes when none of its checks has status FAILURE (WARNING and INFO do not fail, as in the CLI's
// own summary). Its exit code is 1 as soon as one scenario fails, so results come from the files.
//
// The CLI cannot send extra HTTP headers (its server scenarios build the SDK client and raw
// requests themselves), so `headers` are added by a relay on loopback between the CLI and the
// server under test: it forwards every request and response byte for byte, streams included,
// adding only the given headers. Host is rewritten to the target's only when the client addressed
// the relay itself; a spoofed Host (the DNS rebinding scenario) and every Origin pass unchanged.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent } from '../../control-plane/services/agents.js';
import { startTestGateway, type TestGateway } from './gateway.js';

const require = createRequire(import.meta.url);
const CONFORMANCE_CLI = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);
const REFERENCE_SERVER = fileURLToPath(
  new URL('./conformance-reference-server.ts', import.meta.url),
);

export interface ConformanceUpstream {
  /** The reference server's Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  readonly url: string;
  close(): Promise<void>;
}

export interface ScenarioResult {
  readonly passed: boolean;
  /** The failed checks' messages; for a passed scenario, its warnings (may be empty). */
  readonly detail: string;
}

export interface ServerScenarioOptions {
  /** Added to every request the CLI sends (through a relay: the CLI has no header option). */
  readonly headers?: Readonly<Record<string, string>>;
  /** 'all' (default: active and pending scenarios), 'active' or 'pending'. */
  readonly suite?: 'all' | 'active' | 'pending';
  /** Run only this scenario. */
  readonly scenario?: string;
  /**
   * The CLI is stopped after this long (default 120 s); scenarios it started and did not finish
   * are reported as failed. A scenario whose request goes unanswered otherwise waits for the SDK's
   * 60 s request timeout.
   */
  readonly timeoutMs?: number;
}

export function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return once(child, 'exit').then(() => undefined);
}

/** Runs a command to its end, or kills it after `timeoutMs`; its stdout and stderr together. */
export async function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ exitCode: number | null; output: string; stopped: boolean }> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  let stopped = false;
  const timer = setTimeout(() => {
    stopped = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  await waitForExit(child);
  clearTimeout(timer);
  return { exitCode: child.exitCode, output, stopped };
}

/** Starts the suite's reference server in a child process on a free loopback port. */
export async function startConformanceUpstream(): Promise<ConformanceUpstream> {
  const child = spawn(process.execPath, ['--import', 'tsx', REFERENCE_SERVER], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let found = false;
    const onExit = (code: number | null) =>
      reject(new Error(`the conformance reference server exited (${code}) before listening`));
    child.once('exit', onExit);
    child.once('error', reject);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      // Its session log lines are not needed; reading them keeps the pipe from filling up.
      if (found) return;
      buffered += chunk;
      const match = /^listening (\S+)$/m.exec(buffered);
      if (match?.[1]) {
        found = true;
        child.off('exit', onExit);
        resolve(match[1]);
      }
    });
  });
  return {
    url,
    async close() {
      child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}

/** Runs the CLI's server scenarios against `url`; one entry per scenario it started. */
export async function runServerScenarios(
  url: string,
  options: ServerScenarioOptions = {},
): Promise<Map<string, ScenarioResult>> {
  const relay = options.headers ? await startHeaderRelay(url, options.headers) : undefined;
  const outputDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  try {
    const args = [CONFORMANCE_CLI, 'server', '--url', relay?.url ?? url, '-o', outputDir];
    if (options.scenario) args.push('--scenario', options.scenario);
    else args.push('--suite', options.suite ?? 'all');
    const timeoutMs = options.timeoutMs ?? 120_000;
    const { exitCode, output, stopped } = await runCommand(
      process.execPath,
      args,
      outputDir,
      timeoutMs,
    );

    const started = [...output.matchAll(/^Running client scenario '([^']+)'/gm)].map((m) => m[1]!);
    if (started.length === 0) {
      throw new Error(`the conformance CLI ran no scenario (exit ${exitCode}):\n${output}`);
    }
    const results = new Map<string, ScenarioResult>();
    for (const dir of await readdir(outputDir)) {
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir)?.[1];
      if (!scenario) continue;
      const checks = JSON.parse(await readFile(join(outputDir, dir, 'checks.json'), 'utf8')) as {
        id: string;
        status: string;
        errorMessage?: string;
      }[];
      const failures = checks.filter((check) => check.status === 'FAILURE');
      const shown = failures.length > 0 ? failures : checks.filter((c) => c.status === 'WARNING');
      results.set(scenario, {
        passed: failures.length === 0,
        detail: shown
          .map((check) => `${check.id}: ${check.errorMessage ?? check.status}`)
          .join('\n'),
      });
    }
    for (const scenario of started) {
      if (results.has(scenario)) continue;
      results.set(scenario, {
        passed: false,
        detail: stopped
          ? `no result: the CLI was stopped after ${timeoutMs} ms`
          : `no result: the CLI exited (${exitCode}) during the scenario`,
      });
    }
    return results;
  } finally {
    await rm(outputDir, { recursive: true, force: true });
    await relay?.close();
  }
}

export interface HeaderRelay {
  /** The target URL with the relay's origin: point the client here. */
  readonly url: string;
  close(): Promise<void>;
}

/** What a relay answers itself instead of forwarding (see startRelay's `refuse`). */
export interface RelayRefusal {
  readonly status: number;
  readonly body: unknown;
}

/**
 * A loopback HTTP relay to `target`'s origin that adds `headers` to every request and changes
 * nothing else (see the opening comment for Host).
 */
export function startHeaderRelay(
  target: string,
  headers: Readonly<Record<string, string>>,
): Promise<HeaderRelay> {
  return startRelay(target, { headers });
}

/**
 * The relay of startHeaderRelay; with `refuse`, a request's body is read first and `refuse` may
 * answer it instead of the target (what a server of another kind would answer).
 */
export async function startRelay(
  target: string,
  options: {
    readonly headers?: Readonly<Record<string, string>>;
    readonly refuse?: (req: IncomingMessage, body: Buffer) => RelayRefusal | undefined;
  },
): Promise<HeaderRelay> {
  const targetUrl = new URL(target);
  const extra = Object.fromEntries(
    Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
  );
  let relayHost = '';
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined) => {
    const forwarded: IncomingHttpHeaders = { ...req.headers, ...extra };
    if (req.headers.host === relayHost) forwarded.host = targetUrl.host;
    const upstream = httpRequest(
      {
        host: targetUrl.hostname,
        port: targetUrl.port,
        method: req.method,
        path: req.url,
        headers: forwarded,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        // Event streams must reach the client as they are written.
        res.flushHeaders();
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    });
    // A client that goes away (an SSE stream it closes) ends the forwarded request too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    if (body === undefined) req.pipe(upstream);
    else upstream.end(body);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const refuse = options.refuse;
    if (refuse === undefined) {
      forward(req, res, undefined);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const refusal = refuse(req, body);
      if (refusal === undefined) {
        forward(req, res, body);
        return;
      }
      res.writeHead(refusal.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(refusal.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  relayHost = `127.0.0.1:${port}`;
  return {
    url: `http://${relayHost}${targetUrl.pathname}${targetUrl.search}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A PGlite gateway with `url` registered as `serverId` and whitelisted, and an agent permitted
 * every tool; the headers that make the conformance CLI that agent (through startHeaderRelay).
 */
export async function startConformanceGateway(
  url: string,
  serverId: string,
): Promise<{ gateway: TestGateway; headers: Record<string, string> }> {
  const gateway = await startTestGateway('pglite');
  const tenantId = gateway.tenant.id;
  await gateway.registerServer({ tenantId, serverId, url });
  await gateway.setPolicy(tenantId, { trustedServers: [serverId] });
  const { id: agentId } = await createAgent(gateway.db, {
    tenantId,
    name: `conformance-${randomBytes(3).toString('hex')}`,
    allowedTools: ['*'],
    mcpAudiences: [`mcp://${serverId}`],
    publicKey: `test-key-${randomBytes(16).toString('hex')}`,
  });
  await gateway.sync();
  return {
    gateway,
    headers: { authorization: `Bearer ${gateway.tenant.key}`, 'x-agent-id': agentId },
  };
}
