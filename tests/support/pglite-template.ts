// One migrated PGlite cluster per suite run, dumped to a file, so every in-memory test database
// that needs the schema starts from it (openDatabase's `pgliteTemplate`): loading the dump takes
// about 0.3 s where initdb plus the migrations take 3–8 s on these machines, and the suite opens
// hundreds of such databases. Built by the vitest global setup (global-setup.ts), which hands the
// path to the test processes in AGENT_GATEWAY_TEST_PGLITE_TEMPLATE. The file name carries a digest
// of the migrations and of the PGlite version, so a changed migration builds a new template and a
// stale one is never loaded.
import { createHash, randomBytes } from 'node:crypto';
import { access, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../storage/engine/database.js';
import { migrateDatabase, readMigrations } from '../../storage/engine/migrations.js';

export const PGLITE_TEMPLATE_VARIABLE = 'AGENT_GATEWAY_TEST_PGLITE_TEMPLATE';

/** The path of the template for the current migrations, built in `directory` when missing. */
export async function ensurePGliteTemplate(directory: string): Promise<string> {
  const migrations = await readMigrations();
  // The package exports no package.json: read it beside the resolved entry (…/dist/index.js).
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = join(entry.slice(0, entry.lastIndexOf(`${sep}dist${sep}`)), 'package.json');
  const pgliteVersion = (JSON.parse(await readFile(manifest, 'utf8')) as { version: string })
    .version;
  const digest = createHash('sha256')
    .update(pgliteVersion)
    .update(migrations.map((m) => `${m.name}:${m.checksum}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const path = join(directory, `agent-gateway-pglite-template-${digest}.tar`);
  if (
    await access(path).then(
      () => true,
      () => false,
    )
  )
    return path;
  const pglite = await PGlite.create();
  const db = await openDatabase({ pglite, maxConnections: 1 });
  try {
    await migrateDatabase(db, migrations);
    const dump = await pglite.dumpDataDir('none');
    // Written aside and renamed: a concurrent run never loads half a file.
    const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, path);
  } finally {
    await db.close();
    await pglite.close().catch(() => {});
  }
  return path;
}
