// The official MCP conformance suite's requirement sets (`--requirements <revision>`) run against
// an MCP server URL, one protocol era each: 2026-07-28 (stateless: server/discover, per-request
// _meta) and 2025-11-25 (initialize, Mcp-Session-Id). Only @modelcontextprotocol/conformance
// 0.2.0-alpha.12 has them (the project depends on it as `@modelcontextprotocol/conformance-2026`,
// beside 0.1.13 which tests/support/conformance.ts runs), and its CLI needs Node >= 22: it runs on
// the Node 22 binary AGENT_GATEWAY_NODE_LINES lists (.ci/install-node-lines installs it outside
// the dependency tree). The server to run it against is the conformance project's own dual-era
// reference server, a third-party fixture outside the repository (never copied into it).
//
//   const server = await startEverythingServer();
//   const baseline = BASELINES['2026-07-28'];
//   const run = await runRequirements(server.url, '2026-07-28', { expectedFailures: baseline });
//   judgeAgainstBaseline(run, await readBaseline(baseline));   // what the baseline must excuse
//
// What the CLI decides (0.2.0-alpha.12, read in its dist/index.js and README):
// - Each revision's frozen `requirements/<revision>.yaml` in the package lists the `server`
//   scenarios it scores and `not_scored` ones it runs only for visibility (reason `extension`,
//   `added-after-release` or `pending`). Scoring is read from that file: with a baseline the CLI
//   no longer prints its "Not scored" section.
// - Without --expected-failures the exit code is 1 when a scored scenario has a FAILURE check.
// - With it, only scored scenarios are judged, and a WARNING check counts as a failure too. An
//   entry is `<scenario>` (the whole scenario may fail) or `<scenario>:<check-id>` (only that
//   check). Exit 1 on an unexcused FAILURE/WARNING or a stale entry (a baselined scenario without
//   one, a baselined check that now succeeds); an entry naming an unscored or unknown scenario is
//   silently ignored, so judgeAgainstBaseline reports those. An empty file (comments only) or
//   `server: []` is an empty baseline.
// - Results land in `<dir>/server-<scenario>-<timestamp>/checks.json`; a scenario that throws
//   writes none (the CLI counts it as one FAILURE check whose id is the scenario's name).
//
// The CLI cannot send extra HTTP headers, so `headers` go through the loopback relay of
// tests/support/conformance.ts, which changes nothing else.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './cli-process.js';
import { runCommand, startHeaderRelay, waitForExit } from './conformance.js';

export const REVISIONS = ['2026-07-28', '2025-11-25'] as const;
export type Revision = (typeof REVISIONS)[number];

/** The committed expected-failures baselines of the direct runs, one per revision. */
export const BASELINES: Readonly<Record<Revision, string>> = {
  '2026-07-28': fileURLToPath(
    new URL('../mcp-proxy/conformance-baseline-2026-07-28.yaml', import.meta.url),
  ),
  '2025-11-25': fileURLToPath(
    new URL('../mcp-proxy/conformance-baseline-2025-11-25.yaml', import.meta.url),
  ),
};

export const NODE_LINES_VARIABLE = 'AGENT_GATEWAY_NODE_LINES';
export const FIXTURE_DIR_VARIABLE = 'AGENT_GATEWAY_MCP_CONFORMANCE_DIR';
const SERVER_FILE = 'everything-server.ts';
/** Where the fixture is copied to run: its imports then resolve from the project's node_modules. */
const STAGING_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'agent-gateway', 'mcp-conformance');
const START_ATTEMPTS = 3;

const require = createRequire(import.meta.url);
const PACKAGE_DIR = dirname(require.resolve('@modelcontextprotocol/conformance-2026/package.json'));
const CONFORMANCE_CLI = join(PACKAGE_DIR, 'dist', 'index.js');

/** A file found on this machine, or why it is not there. */
export type Located = { readonly path: string; readonly missing?: undefined } | Missing;
type Missing = { readonly path?: undefined; readonly missing: string };

/** `node --version` of a binary, or undefined when it cannot be run. */
function versionOf(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/**
 * The Node 22 binary among those AGENT_GATEWAY_NODE_LINES lists, the variable read as
 * tests/runtime/node-lines.test.ts reads it (that file exports nothing to import).
 */
function locateNode22(): Located {
  const binaries = (process.env[NODE_LINES_VARIABLE] ?? '')
    .split(':')
    .filter((path) => path !== '');
  if (binaries.length === 0) {
    return { missing: `${NODE_LINES_VARIABLE} is not set (.ci/install-node-lines installs it)` };
  }
  const binary = binaries.find((path) => /^v22\./.test(versionOf(path) ?? ''));
  return binary
    ? { path: binary }
    : { missing: `${NODE_LINES_VARIABLE} lists no runnable Node 22 (${binaries.join(', ')})` };
}

/**
 * The fixture's folder: AGENT_GATEWAY_MCP_CONFORMANCE_DIR when set (and then only it: a wrong
 * setting is reported, not replaced), else ../shared/mcp-conformance beside the repository, else
 * /work/shared/mcp-conformance.
 */
function locateFixture(): Located {
  const configured = process.env[FIXTURE_DIR_VARIABLE];
  const candidates = configured
    ? [resolve(configured)]
    : [resolve(REPO_ROOT, '..', 'shared', 'mcp-conformance'), '/work/shared/mcp-conformance'];
  const found = candidates.find((dir) => existsSync(join(dir, SERVER_FILE)));
  if (found) return { path: found };
  const hint = configured ? `from ${FIXTURE_DIR_VARIABLE}` : `set ${FIXTURE_DIR_VARIABLE}`;
  return { missing: `no ${SERVER_FILE} in ${[...new Set(candidates)].join(' or ')} (${hint})` };
}

/** The Node 22 binary the CLI runs on. */
export const NODE_22 = locateNode22();
/** The folder of the reference server (everything-server.ts, its package.json, README, LICENSE). */
export const EVERYTHING_SERVER_FIXTURE = locateFixture();

/**
 * Why these runs cannot happen on this machine, or undefined when they can. Under CI=true a
 * missing prerequisite is an error (thrown), as for Chromium and the Node lines: CI must not
 * silently stop measuring.
 */
export function conformance2026Missing(): string | undefined {
  const reasons = [NODE_22.missing, EVERYTHING_SERVER_FIXTURE.missing].filter(
    (reason): reason is string => reason !== undefined,
  );
  if (reasons.length === 0) return undefined;
  const reason = reasons.join('; ');
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but the MCP conformance 2026 runs cannot run: ${reason}`);
  }
  return reason;
}

function required(located: Located): string {
  if (located.path === undefined) throw new Error(located.missing);
  return located.path;
}

export interface EverythingServer {
  /** Its Streamable HTTP endpoint, both eras: http://127.0.0.1:<port>/mcp */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Copies the fixture (with its own package.json: an ES module, as upstream) into the project's
 * node_modules cache, each file written aside and renamed, so parallel starts never run a half
 * copy.
 */
async function stageEverythingServer(): Promise<string> {
  const fixture = required(EVERYTHING_SERVER_FIXTURE);
  await mkdir(STAGING_DIR, { recursive: true });
  for (const name of [SERVER_FILE, 'package.json']) {
    const partial = join(STAGING_DIR, `.${name}.${randomUUID()}`);
    await copyFile(join(fixture, name), partial);
    await rename(partial, join(STAGING_DIR, name));
  }
  return join(STAGING_DIR, SERVER_FILE);
}

/** A port free on every interface (the server listens on all of them): bound, read, released. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Runs the staged server on `port`; resolves once it prints its banner. */
async function startOnPort(file: string, port: number): Promise<EverythingServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const banner = `MCP Conformance Test Server running on http://localhost:${port}`;
    let listening = false;
    const onExit = (code: number | null) =>
      reject(new Error(`the reference server exited (${code}) before listening:\n${output}`));
    child.once('exit', onExit);
    child.once('error', reject);
    // Both pipes are read to the end (its request log would otherwise fill them).
    const collect = (chunk: string) => {
      if (listening) return;
      output += chunk;
      if (output.includes(banner)) {
        listening = true;
        child.off('exit', onExit);
        resolve();
      }
    };
    child.stdout?.setEncoding('utf8').on('data', collect);
    child.stderr?.setEncoding('utf8').on('data', collect);
  });
  return {
    // Its DNS rebinding protection accepts 127.0.0.1 as well as localhost (both pass the
    // dns-rebinding-protection scenario); an IP keeps the address family out of the question.
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}

/**
 * Starts the reference server on a free port. The server takes only PORT (0 would hide the real
 * port), so a port is picked first; when another process takes it meanwhile, a new one is tried.
 */
export async function startEverythingServer(): Promise<EverythingServer> {
  const file = await stageEverythingServer();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(file, await freePort());
    } catch (error) {
      const taken = (error as Error).message.includes('EADDRINUSE');
      if (!taken || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';

export interface RequirementResult {
  /** No FAILURE check: the CLI's own verdict without a baseline (warnings do not fail). */
  readonly passed: boolean;
  /** Whether the revision scores it; the others run for visibility only. */
  readonly scored: boolean;
  /** For an unscored scenario: extension, added-after-release or pending. */
  readonly notScoredReason?: string;
  /**
   * Each check id's most severe status (FAILURE > WARNING > SUCCESS > SKIPPED; INFO left out), as
   * the CLI collapses repeated ids. FAILURE and WARNING are what a baseline must excuse.
   */
  readonly checks: ReadonlyMap<string, CheckStatus>;
  /** The failed checks' messages; for a passed scenario, its warnings (may be empty). */
  readonly detail: string;
}

export interface RequirementsRun {
  readonly revision: Revision;
  /** The CLI's exit code (null when it was stopped). */
  readonly exitCode: number | null;
  /** One entry per scenario it ran, and per scored scenario it did not (failed, "no result"). */
  readonly scenarios: ReadonlyMap<string, RequirementResult>;
  /** Its stdout and stderr, colours removed. */
  readonly output: string;
  readonly seconds: number;
}

export interface RequirementsOptions {
  /** An expected-failures YAML file, passed to the CLI (it then decides the exit code by it). */
  readonly expectedFailures?: string;
  /** Added to every request the CLI sends (through a relay: the CLI has no header option). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The CLI is stopped after this long (default 120 s); its unfinished scenarios fail. */
  readonly timeoutMs?: number;
}

interface RequirementSet {
  readonly scored: ReadonlySet<string>;
  /** Unscored server scenarios and why. */
  readonly notScored: ReadonlyMap<string, string>;
}

/** The server leg of the package's frozen requirement set for `revision`. */
async function readRequirementSet(revision: Revision): Promise<RequirementSet> {
  const text = await readFile(join(PACKAGE_DIR, 'requirements', `${revision}.yaml`), 'utf8');
  const set = parseYaml(text) as {
    server: string[];
    not_scored?: { scenario: string; leg: string; reason: string }[];
  };
  const notScored = (set.not_scored ?? []).filter((entry) => entry.leg === 'server');
  return {
    scored: new Set(set.server),
    notScored: new Map(notScored.map((entry) => [entry.scenario, entry.reason])),
  };
}

const SEVERITY: Record<string, number> = { FAILURE: 3, WARNING: 2, SUCCESS: 1 };

interface Check {
  readonly id: string;
  readonly status: CheckStatus;
  readonly errorMessage?: string;
}

/** Each id's most severe status, later occurrences winning ties (the CLI's collapse). */
function collapse(checks: readonly Check[]): Map<string, CheckStatus> {
  const statuses = new Map<string, CheckStatus>();
  for (const { id, status } of checks) {
    if (status === 'INFO') continue;
    const before = statuses.get(id);
    if (before === undefined || (SEVERITY[status] ?? 0) >= (SEVERITY[before] ?? 0)) {
      statuses.set(id, status);
    }
  }
  return statuses;
}

function describeChecks(checks: readonly Check[]): string {
  const failures = checks.filter((check) => check.status === 'FAILURE');
  const shown = failures.length > 0 ? failures : checks.filter((c) => c.status === 'WARNING');
  return shown
    .map((check) => `${check.id} (${check.status}): ${check.errorMessage ?? ''}`)
    .join('\n');
}

/** Reads every `server-<scenario>-<timestamp>/checks.json` the CLI wrote into `outputDir`. */
async function readResultDirs(outputDir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for (const dir of await readdir(outputDir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir)?.[1];
    if (!scenario) continue;
    const text = await readFile(join(outputDir, dir, 'checks.json'), 'utf8');
    results.set(scenario, JSON.parse(text) as Check[]);
  }
  return results;
}

/** Runs the CLI to its end (or `timeoutMs`); resolves with its exit code and output. */
async function runCli(
  node: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ exitCode: number | null; output: string; stopped: boolean }> {
  const run = await runCommand(node, [CONFORMANCE_CLI, ...args], cwd, timeoutMs);
  return { ...run, output: stripVTControlCharacters(run.output) };
}

/** Runs `revision`'s requirement set against `url`; one result per scenario. */
export async function runRequirements(
  url: string,
  revision: Revision,
  options: RequirementsOptions = {},
): Promise<RequirementsRun> {
  const started = performance.now();
  const node = required(NODE_22);
  const requirements = await readRequirementSet(revision);
  const relay = options.headers ? await startHeaderRelay(url, options.headers) : undefined;
  const outputDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-2026-'));
  try {
    const args = ['server', '--url', relay?.url ?? url, '--requirements', revision];
    args.push('-o', outputDir);
    if (options.expectedFailures) args.push('--expected-failures', options.expectedFailures);
    const timeoutMs = options.timeoutMs ?? 120_000;
    const cli = await runCli(node, args, outputDir, timeoutMs);

    const ran = [...cli.output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]!);
    if (ran.length === 0) {
      throw new Error(`the conformance CLI ran no scenario (exit ${cli.exitCode}):\n${cli.output}`);
    }
    const written = await readResultDirs(outputDir);
    const noResult = cli.stopped
      ? `no result: the CLI was stopped after ${timeoutMs} ms`
      : `no result: the scenario threw or the CLI exited (${cli.exitCode}) during it`;
    const scenarios = new Map<string, RequirementResult>();
    for (const scenario of new Set([...ran, ...requirements.scored])) {
      // A scenario without checks.json counts as one FAILURE check named after it, as in the CLI.
      const checks = written.get(scenario) ?? [
        { id: scenario, status: 'FAILURE' as const, errorMessage: noResult },
      ];
      scenarios.set(scenario, {
        passed: !checks.some((check) => check.status === 'FAILURE'),
        scored: requirements.scored.has(scenario),
        notScoredReason: requirements.notScored.get(scenario),
        checks: collapse(checks),
        detail: describeChecks(checks),
      });
    }
    const seconds = (performance.now() - started) / 1000;
    return { revision, exitCode: cli.exitCode, scenarios, output: cli.output, seconds };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
    await relay?.close();
  }
}

/**
 * Runs one of the suite's authorization-server scenarios against the issuer `url`
 * (`conformance authorization --scenario <name> --url <url>`): each check with its status.
 */
export async function runAuthorizationScenario(
  url: string,
  scenario: string,
): Promise<{ readonly checks: readonly Check[]; readonly output: string }> {
  const node = required(NODE_22);
  const outputDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-auth-'));
  try {
    const args = ['authorization', '--scenario', scenario, '--url', url, '-o', outputDir];
    const cli = await runCli(node, args, outputDir, 60_000);
    const checks: Check[] = [];
    for (const dir of await readdir(outputDir)) {
      const text = await readFile(join(outputDir, dir, 'checks.json'), 'utf8').catch(() => '[]');
      checks.push(...(JSON.parse(text) as Check[]));
    }
    return { checks, output: cli.output };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

export interface Baseline {
  /** The `server` entries as written: `<scenario>` or `<scenario>:<check-id>`. */
  readonly entries: readonly string[];
}

/** Reads an expected-failures file's `server` entries (an empty file is an empty baseline). */
export async function readBaseline(path: string): Promise<Baseline> {
  const parsed = parseYaml(await readFile(path, 'utf8')) as { server?: unknown[] } | null;
  return { entries: (parsed?.server ?? []).map(String) };
}

export interface BaselineVerdict {
  /** Scored FAILURE/WARNING checks the baseline does not excuse, as `<scenario>:<check-id>`. */
  readonly unexcused: readonly string[];
  /** Entries whose scenario, or check, no longer fails (the CLI exits 1 for these). */
  readonly stale: readonly string[];
  /** Entries naming no scored scenario of the run's revision (the CLI silently ignores these). */
  readonly ignored: readonly string[];
}

const flagged = (status: CheckStatus) => status === 'FAILURE' || status === 'WARNING';

/** Judges a run's scored scenarios against a baseline by the CLI's rules (opening comment). */
export function judgeAgainstBaseline(run: RequirementsRun, baseline: Baseline): BaselineVerdict {
  const whole = new Set<string>();
  const perCheck = new Map<string, Set<string>>();
  const unexcused: string[] = [];
  const stale: string[] = [];
  const ignored: string[] = [];
  for (const entry of baseline.entries) {
    const [scenario = '', checkId] = entry.split(/:(.*)/s);
    if (!run.scenarios.get(scenario)?.scored) ignored.push(entry);
    else if (checkId === undefined) whole.add(scenario);
    else perCheck.set(scenario, (perCheck.get(scenario) ?? new Set()).add(checkId));
  }
  for (const [scenario, result] of run.scenarios) {
    if (!result.scored) continue;
    const failing = [...result.checks].filter(([, status]) => flagged(status)).map(([id]) => id);
    if (whole.has(scenario)) {
      if (failing.length === 0) stale.push(scenario);
      continue;
    }
    const excused = perCheck.get(scenario) ?? new Set<string>();
    for (const id of failing) if (!excused.has(id)) unexcused.push(`${scenario}:${id}`);
    for (const id of excused) {
      if (result.checks.get(id) === 'SUCCESS') stale.push(`${scenario}:${id}`);
    }
  }
  return { unexcused, stale, ignored };
}
