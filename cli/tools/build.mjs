// `npm run build` (and, with --install, the `prepare` script `npm install` and `npm ci` run): every
// step of the build, each as soon as the steps it needs have ended, so a fresh install waits for
// the longest chain only (Prisma's client, the modules, the cluster template) and not for the sum.
// It was a shell line of nested `npm run`s, the tsc emit alone 7.5 s; the modules are now emitted
// by tsgo (typescript-native, the compiler `npm run typecheck` runs), the same JavaScript in 1 s.
//
// A step's output is held and printed when it ends, under its name, so parallel steps do not
// interleave; a failed step's output is printed at once, the others are stopped, and the status
// is 1. Plain Node, no dependency, like tests/run-suite.mjs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const node = process.execPath;

/**
 * What the build runs: a command and the steps it needs first. `install` steps run only for
 * `prepare` (`npm run build` leaves Prisma's generated client and the client package alone).
 */
const STEPS = {
  'client package': {
    install: true,
    command: [npm, 'run', 'build', '--silent', '--workspace', '@agent-gateway/client'],
  },
  'Prisma client': { install: true, command: [npm, 'run', 'db:generate', '--silent'] },
  console: { command: [npm, 'run', 'build:console', '--silent'] },
  modules: {
    after: ['Prisma client'],
    command: [
      node,
      'node_modules/typescript-native/bin/tsc',
      '-p',
      'tsconfig.build.json',
      '--noCheck',
    ],
  },
  'server bundle': { after: ['modules'], command: [node, 'cli/tools/bundle-server-commands.mjs'] },
  'cluster template': {
    after: ['modules'],
    command: [node, 'dist/storage/engine/write-cluster-template.js'],
  },
};

const HELP = `Usage: node cli/tools/build.mjs [--install]

Builds dist/ (modules, server bundle, empty cluster template) and web-console/dist, each step as
soon as the steps it needs have ended. --install also generates Prisma's client and builds the
client package first, as \`npm install\` needs (the prepare script).`;

const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(HELP);
  process.exit(0);
}
const unknown = args.filter((arg) => arg !== '--install');
if (unknown.length > 0) {
  console.error(`build: unknown argument ${unknown[0]} (node cli/tools/build.mjs --help)`);
  process.exit(2);
}
const install = args.includes('--install');
const steps = Object.entries(STEPS).filter(([, step]) => install || !step.install);
const included = new Set(steps.map(([name]) => name));

const children = new Set();
const started = performance.now();
const seconds = (since) => ((performance.now() - since) / 1000).toFixed(1);

/** Runs one step once the steps it needs have ended; rejects when it fails. */
async function run(name, { command, after = [] }, ended) {
  await undefined; // every step is in `ended` by now
  await Promise.all(after.filter((need) => included.has(need)).map((need) => ended.get(need)));
  const since = performance.now();
  const [file, ...rest] = command;
  const child = spawn(file, rest, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const chunks = [];
  child.stdout.on('data', (chunk) => chunks.push(chunk));
  child.stderr.on('data', (chunk) => chunks.push(chunk));
  const [code, signal] = await once(child, 'close');
  children.delete(child);
  const output = Buffer.concat(chunks).toString('utf8').trimEnd();
  if (code !== 0) {
    throw new Error(
      `${name} failed (${signal ?? code}, ${seconds(since)} s): ${command.join(' ')}\n${output}`,
    );
  }
  console.log(`✓ ${name} (${seconds(since)} s)${output === '' ? '' : `\n${output}`}`);
}

const ended = new Map();
for (const [name, step] of steps) ended.set(name, run(name, step, ended));
try {
  await Promise.all(ended.values());
  console.log(`built in ${seconds(started)} s`);
} catch (error) {
  for (const child of children) child.kill('SIGTERM');
  console.error(`✗ ${error.message}`);
  process.exitCode = 1;
}
