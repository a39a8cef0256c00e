// `npm test`'s console build: runs `npm run build:console` only when a file the bundle is built
// from is newer than the bundle (web-console/dist/index.html). A fresh clone's `npm install`
// built it moments before (the prepare script), so CI no longer builds it twice; a developer who
// edited the console, or whose dependencies changed, still gets it rebuilt before the browser
// tests load it.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const consoleDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = dirname(consoleDir);
const bundle = join(consoleDir, 'dist', 'index.html');
const inputs = [
  join(consoleDir, 'src'),
  join(consoleDir, 'index.html'),
  join(consoleDir, 'vite.config.ts'),
  join(consoleDir, 'package.json'),
  join(consoleDir, 'tsconfig.json'),
  join(repoRoot, 'package-lock.json'),
];

/**
 * The newest modification time under `path` (a file or a folder), 0 when it does not exist.
 * Declaration files are left out: they never reach the bundle, and `npm run typecheck` rewrites
 * src/graphql-env.d.ts (gql-tada) on every run.
 */
function newest(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return path.endsWith('.d.ts') ? 0 : stats.mtimeMs;
  // Files only: a folder's time changes when gql-tada replaces its declaration file.
  let latest = 0;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const built = newest(bundle);
const stale = built === 0 || inputs.some((input) => newest(input) > built);
if (!stale) {
  console.info('web-console/dist is newer than its sources: not rebuilt');
} else {
  const { status } = spawnSync('npm', ['run', 'build:console'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  process.exit(status ?? 1);
}
