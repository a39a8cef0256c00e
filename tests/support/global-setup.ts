// Once per `vitest run`, before any test process starts:
// - builds (or finds) the PGlite templates, migrated and empty (pglite-template.ts), and hands
//   their paths to the test processes, which inherit this environment;
// - rebuilds `dist/` (the modules and the server bundle) when a gateway source is newer than the
//   built CLI or its bundle, so the CLI tests, which run `dist/cli/main.js` as users do
//   (cli-process.ts), never test stale code, and writes the build's empty cluster dump when dist/
//   lacks it;
// - names the run (TEST_RUN_VARIABLE): every PostgreSQL schema its tests create starts with that
//   name, and the teardown drops those a test process still held (databases.ts hands migrated
//   schemas from test to test) or a failed test left.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findClusterTemplate } from '../../storage/engine/cluster-template.js';
import { CLI_ENTRY, REPO_ROOT, SERVER_BUNDLE } from './cli-process.js';
import {
  ensurePGliteTemplates,
  PGLITE_EMPTY_TEMPLATE_VARIABLE,
  PGLITE_TEMPLATE_VARIABLE,
} from './pglite-template.js';
import { dropRunSchemas, TEST_RUN_VARIABLE } from './run-schemas.js';

/** The bundler `npm run build:server` runs after tsc: a change to it is a change to dist/. */
const SERVER_BUNDLE_TOOL = 'cli/tools/bundle-server-commands.mjs';

/** The folders `tsconfig.build.json` compiles into dist/. */
const SOURCE_FOLDERS = [
  'cli',
  'storage',
  'shared',
  'http-edge',
  'control-plane',
  'data-plane',
  'runtime',
  'prisma/generated',
];

export default async function setup(): Promise<() => Promise<void>> {
  // Built first: the empty template is the build's cluster dump when there is one.
  await ensureBuilt();
  const templates = await ensurePGliteTemplates(tmpdir());
  process.env[PGLITE_TEMPLATE_VARIABLE] = templates.migrated;
  process.env[PGLITE_EMPTY_TEMPLATE_VARIABLE] = templates.empty;
  const run = randomBytes(4).toString('hex');
  process.env[TEST_RUN_VARIABLE] = run;
  const postgresUrl = process.env.DATABASE_URL || undefined;
  return async () => {
    if (postgresUrl !== undefined) await dropRunSchemas(postgresUrl, run);
  };
}

async function ensureBuilt(): Promise<void> {
  const modifiedAt = (file: string) =>
    stat(join(REPO_ROOT, file)).then(
      (entry) => entry.mtimeMs,
      () => 0,
    );
  const built = Math.min(await modifiedAt(CLI_ENTRY), await modifiedAt(SERVER_BUNDLE));
  const newest = Math.max(
    ...(await Promise.all(SOURCE_FOLDERS.map((folder) => newestTs(join(REPO_ROOT, folder))))),
    await modifiedAt(SERVER_BUNDLE_TOOL),
  );
  if (newest > built) await compile();
  // The empty cluster new data directories start from (storage/engine/cluster-template.ts).
  if ((await findClusterTemplate()) === null) {
    console.info(
      'no empty cluster dump in dist/: node dist/storage/engine/write-cluster-template.js',
    );
    await promisify(execFile)(
      process.execPath,
      [join(REPO_ROOT, 'dist/storage/engine/write-cluster-template.js')],
      { cwd: REPO_ROOT },
    );
  }
}

async function compile(): Promise<void> {
  // The build's own script (tsc, emitted unchecked, then the bundle): `npm run typecheck` checks.
  console.info('sources are newer than dist/: npm run build:server');
  await promisify(execFile)(
    process.platform === 'win32' ? 'npm.cmd' : 'npm',
    ['run', 'build:server', '--silent'],
    { cwd: REPO_ROOT },
  );
}

/** The newest modification time of a .ts file under `folder` (0 when none). */
async function newestTs(folder: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const { mtimeMs } = await stat(join(entry.parentPath, entry.name));
    if (mtimeMs > newest) newest = mtimeMs;
  }
  return newest;
}
