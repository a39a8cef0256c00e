// One migrated PGlite cluster per suite run, dumped to a file, so every in-memory test database
// that needs the schema starts from it (openDatabase's `pgliteTemplate`): loading the dump takes
// about 0.3 s where initdb plus the migrations take 3–8 s on these machines, and the suite opens
// hundreds of such databases. Beside it the same cluster before the migrations (the empty
// template), for the tests of an empty database: initdb alone costs about 9 s of CPU here, the
// template about 2. The empty template is the build's own dump (storage/engine/cluster-template.ts)
// when dist/ has one for the installed PGlite, so the suite runs no initdb of its own. Built by the vitest global setup (global-setup.ts), which hands the paths to
// the test processes in AGENT_GATEWAY_TEST_PGLITE_TEMPLATE and
// AGENT_GATEWAY_TEST_PGLITE_EMPTY_TEMPLATE. The file names carry a digest of the PGlite version
// (and of the migrations), so a changed migration builds a new template and a stale one is never
// loaded.
import { createHash, randomBytes } from 'node:crypto';
import { access, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { findClusterTemplate } from '../../storage/engine/cluster-template.js';
import { openDatabase } from '../../storage/engine/database.js';
import { migrateDatabase, readMigrations } from '../../storage/engine/migrations.js';
import { pgliteVersion } from '../../storage/engine/pglite-package.js';
import { raiseWasmTieringBudget } from '../../storage/engine/wasm-tiering.js';

/** In the migrated template's name, so a cached template that still has them is not loaded. */
const TEMPLATE_FORMAT = 'without template0 and template1';

export const PGLITE_TEMPLATE_VARIABLE = 'AGENT_GATEWAY_TEST_PGLITE_TEMPLATE';
export const PGLITE_EMPTY_TEMPLATE_VARIABLE = 'AGENT_GATEWAY_TEST_PGLITE_EMPTY_TEMPLATE';

export interface PGliteTemplates {
  /** Every migration applied. */
  readonly migrated: string;
  /** A cluster as initdb leaves it. */
  readonly empty: string;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** The paths of the templates for the current migrations, built in `directory` when missing. */
export async function ensurePGliteTemplates(directory: string): Promise<PGliteTemplates> {
  const migrations = await readMigrations();
  const version = await pgliteVersion();
  const built = await findClusterTemplate();
  const digest = (...parts: string[]) =>
    createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
  const migrationList = migrations.map((m) => `${m.name}:${m.checksum}`).join('\n');
  const templates: PGliteTemplates = {
    migrated: join(
      directory,
      `agent-gateway-pglite-template-${digest(version, migrationList, TEMPLATE_FORMAT)}.tar`,
    ),
    empty: built ?? join(directory, `agent-gateway-pglite-empty-${digest(version)}.tar`),
  };
  const [hasMigrated, hasEmpty] = await Promise.all([
    exists(templates.migrated),
    exists(templates.empty),
  ]);
  if (hasMigrated && hasEmpty) return templates;
  raiseWasmTieringBudget();
  const pglite = hasEmpty
    ? await PGlite.create({ loadDataDir: new Blob([await readFile(templates.empty)]) })
    : await PGlite.create();
  const db = await openDatabase({ pglite, maxConnections: 1 });
  try {
    if (!hasEmpty) await writeDump(pglite, templates.empty);
    if (!hasMigrated) {
      await migrateDatabase(db, migrations);
      await dropTemplateDatabases(pglite);
      await writeDump(pglite, templates.migrated);
    }
  } finally {
    await db.close();
    await pglite.close().catch(() => {});
  }
  return templates;
}

/**
 * The migrated template without initdb's template0 and template1 databases: nothing in the suite
 * creates a database, and every test database loads the dump, so their 15 of 41 MB were read and
 * copied hundreds of times a run. Opening a test database took 1.6–2.0 CPU-s from the full dump
 * and 1.0–1.3 from this one (same process, alternately). The gateway's own cluster dump
 * (storage/engine/cluster-template.ts) keeps them: an operator's database may need template1.
 */
async function dropTemplateDatabases(pglite: PGlite): Promise<void> {
  await pglite.exec(
    "update pg_database set datistemplate = false where datname in ('template0', 'template1')",
  );
  await pglite.exec('drop database template0');
  await pglite.exec('drop database template1');
  await pglite.exec('checkpoint');
}

async function writeDump(pglite: PGlite, path: string): Promise<void> {
  const dump = await pglite.dumpDataDir('none');
  // Written aside and renamed: a concurrent run never loads half a file.
  const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, path);
}
