// The gateway on every supported Node.js LTS line, not only the machine's Node 20 (the build
// runtime, which runs the whole suite): for each binary AGENT_GATEWAY_NODE_LINES lists
// (colon-separated; .ci/install-node-lines installs them outside the dependency tree), the unit
// project and the end-to-end smoke (tests/cli/smoke.test.ts) run in a vitest of their own on that
// Node, one binary after another, with each property at a tenth of its runs (the Node 20 run
// searches at full depth; these check the runtime). Without the variable this file is skipped
// with a visible message; under CI its absence is an error, so the other lines cannot silently
// stop being tested.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { delimiter, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli-process.js';
import { PROPERTY_RUNS_SHARE_VARIABLE } from '../support/property-runs.js';

const NODE_LINES_VARIABLE = 'AGENT_GATEWAY_NODE_LINES';
/** The LTS lines users run besides 20 (README, "Test it"): 22 and 24 in maintenance, 26 active. */
const LTS_LINES = [22, 24, 26];
/** Failure timeout only: each step is a vitest run of its own, seconds to a minute or two. */
const STEP_TIMEOUT_MS = 600_000;
const TAIL_LINES = 80;
/**
 * Each property's share of its runs on these lines (tests/support/property-runs.ts): every
 * property and example runs on every line, and the depth of the search is the Node 20 run's.
 */
const PROPERTY_RUNS_SHARE = '0.1';

const binaries = (process.env[NODE_LINES_VARIABLE] ?? '').split(':').filter((path) => path !== '');

if (binaries.length === 0) {
  if (process.env.CI === 'true') {
    throw new Error(
      `CI=true but ${NODE_LINES_VARIABLE} is not set: the Node ${LTS_LINES.join(', ')} runs must run in CI (.ci/install-node-lines)`,
    );
  }
  console.warn(
    `${NODE_LINES_VARIABLE} is not set: the unit project and the smoke on Node ${LTS_LINES.join(', ')} are SKIPPED (.ci/install-node-lines installs them).`,
  );
}

/** `node --version` of a binary, or the reason it could not be run. */
function versionOf(binary: string): string {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch (error) {
    return `unusable (${(error as Error).message})`;
  }
}

const lines = binaries.map((binary) => ({ binary, version: versionOf(binary) }));
const majorOf = (version: string) => Number(/^v(\d+)\./.exec(version)?.[1]);

/** The environment of a nested vitest: the caller's (CI included) without this vitest's own. */
function nestedEnvironment(binary: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of Object.keys(env)) {
    if (name.startsWith('VITEST') || name === 'TEST' || name === 'NODE_ENV') delete env[name];
  }
  delete env.FORCE_COLOR;
  delete env[NODE_LINES_VARIABLE];
  env[PROPERTY_RUNS_SHARE_VARIABLE] = PROPERTY_RUNS_SHARE;
  // A `node` any test starts by name is the line under test too.
  env.PATH = `${dirname(binary)}${delimiter}${env.PATH ?? ''}`;
  return env;
}

/** Runs vitest on `binary` with `args`; resolves with its exit code and combined output. */
async function runVitest(
  binary: string,
  args: readonly string[],
): Promise<{ code: number | null; output: string; seconds: number }> {
  const started = performance.now();
  const child = spawn(binary, ['node_modules/vitest/vitest.mjs', 'run', ...args], {
    cwd: REPO_ROOT,
    env: nestedEnvironment(binary),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  return { code, output: Buffer.concat(chunks).toString('utf8'), seconds };
}

/** Asserts a nested run passed; on failure the message carries its output's tail. */
function expectPassed(
  run: { code: number | null; output: string; seconds: number },
  what: string,
): void {
  const outputLines = run.output.trimEnd().split('\n');
  expect(
    run.code,
    `${what} exited ${run.code}; last ${TAIL_LINES} lines:\n${outputLines.slice(-TAIL_LINES).join('\n')}`,
  ).toBe(0);
  const summary = outputLines.filter((line) => /^\s*(Test Files|Tests)\s/.test(line));
  console.info(`${what}: passed in ${run.seconds.toFixed(1)} s (${summary.join('; ').trim()})`);
}

describe.skipIf(binaries.length === 0)(`the gateway on Node ${LTS_LINES.join(', ')}`, () => {
  it(`${NODE_LINES_VARIABLE} lists one binary per LTS line`, () => {
    expect(lines.map(({ version }) => majorOf(version)).sort((a, b) => a - b)).toEqual(LTS_LINES);
  });

  // One binary after another: each nested vitest uses the machine's cores itself.
  for (const { binary, version } of lines) {
    describe(`Node ${version} (${binary})`, () => {
      it('is one of the LTS lines', () => {
        expect(LTS_LINES).toContain(majorOf(version));
      });

      it(
        'passes the unit project',
        async () => {
          expectPassed(
            await runVitest(binary, ['--project', 'unit']),
            `Node ${version}: unit project`,
          );
        },
        STEP_TIMEOUT_MS,
      );

      it(
        'passes the end-to-end smoke',
        async () => {
          expectPassed(
            await runVitest(binary, ['--project', 'integration', 'tests/cli/smoke.test.ts']),
            `Node ${version}: smoke`,
          );
        },
        STEP_TIMEOUT_MS,
      );
    });
  }
});
