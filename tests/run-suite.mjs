// `npm test`: the static checks (types, lints, layers, the OpenAPI document) and the test projects,
// at the same time. They used to run one after the other, checks first: on a 2-core machine the
// checks kept vitest waiting for over a minute while vitest itself, mostly waiting on child
// processes, sockets and browsers, leaves a fifth of the cores idle. Now the checks use that
// room (docs/PERFORMANCE.md, "Checks beside the tests").
//
// vitest's output streams as it comes; each check's output is held and printed once it ends, in
// full when it failed (at once, so a type error is seen without waiting for the tests), as one
// line when it passed. The exit status is 1 when any step failed. Arguments go to vitest
// (`npm test -- tests/cli` runs those files, the checks still run in full).
//
// Plain Node, no dependency: a task runner (npm-run-all, concurrently) would interleave the
// outputs line by line, which is what this avoids.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The checks `npm test` runs besides the tests, one after another in a lane of their own. */
const CHECKS = ['typecheck', 'lint', 'lint:layers', 'lint:openapi'];

const children = new Set();

/** Runs a command to its end; `quiet` holds its output and returns it instead of printing it. */
async function run(command, args, { quiet }) {
  const child = spawn(command, args, {
    cwd: root,
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  children.add(child);
  const chunks = [];
  if (quiet) {
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
  }
  const [code, signal] = await once(child, 'close');
  children.delete(child);
  return { ok: code === 0, status: signal ?? code, output: Buffer.concat(chunks).toString('utf8') };
}

/** Runs the checks one after another; each answers whether it passed and its summary line. */
async function checks() {
  const results = [];
  for (const script of CHECKS) {
    const started = performance.now();
    const { ok, status, output } = await run(npm, ['run', script, '--silent'], { quiet: true });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (!ok) {
      process.stderr.write(`\n✗ npm run ${script} failed (${status}, ${seconds} s):\n${output}\n`);
    }
    const line = ok
      ? `✓ npm run ${script} (${seconds} s)`
      : `✗ npm run ${script} failed (${status}): its output is above`;
    results.push({ ok, line });
  }
  return results;
}

async function tests() {
  // The console's browser tests load the built bundle: rebuilt first when a source is newer.
  const bundle = await run(process.execPath, ['web-console/tools/build-if-stale.mjs'], {
    quiet: false,
  });
  if (!bundle.ok) return false;
  const vitest = await run(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)],
    { quiet: false },
  );
  return vitest.ok;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exitCode = 1;
  });
}

const [checkResults, testsPassed] = await Promise.all([checks(), tests()]);
const summary = checkResults.map(({ line }) => line).join('\n');
process.stdout.write(`\nChecks run beside the tests:\n${summary}\n`);
const checksPassed = checkResults.every(({ ok }) => ok);
if (!testsPassed) process.stdout.write('✗ vitest failed: its output is above\n');
process.exitCode = checksPassed && testsPassed ? 0 : 1;
