// A new data directory starts from the build's empty cluster (storage/engine/cluster-template.ts)
// instead of running initdb: the cluster it gets is that dump's (same system identifier, which
// initdb draws at random), its files are private like every file of the data directory, and once
// it holds a cluster the dump is never loaded over it.
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clusterTemplatePath,
  findClusterTemplate,
} from '../../../storage/engine/cluster-template.js';
import { openDatabase } from '../../../storage/engine/database.js';
import { pgliteVersion } from '../../../storage/engine/pglite-package.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const IDENTIFIER = 'select system_identifier::text as id from pg_control_system()';

async function systemIdentifier(query: (sql: string) => Promise<{ id: string }[]>) {
  const [row] = await query(IDENTIFIER);
  return row?.id;
}

/** Every file and directory mode under `dir`, without following links. */
async function modes(dir: string): Promise<number[]> {
  const found = [(await lstat(dir)).mode & 0o777];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) found.push(...(await modes(join(dir, entry.name))));
    else if (entry.isFile()) found.push((await lstat(join(dir, entry.name))).mode & 0o777);
  }
  return found;
}

describe('the build’s empty cluster', () => {
  it('is written by the build for the installed PGlite, its version in the name', async () => {
    expect(await clusterTemplatePath()).toMatch(
      new RegExp(
        `dist/storage/engine/pglite-cluster-${(await pgliteVersion()).replaceAll('.', '\\.')}\\.tar$`,
      ),
    );
    // The suite runs on a built checkout (npm install builds): the dump must be there.
    expect(await findClusterTemplate()).toBe(await clusterTemplatePath());
  });

  it('is what a new data directory starts from, private, and never loaded over a cluster', async () => {
    const template = await findClusterTemplate();
    if (template === null) throw new Error('no cluster dump: run npm run build');
    const fromDump = await PGlite.create({
      loadDataDir: new Blob([await readFile(template)]),
    });
    const dumped = await systemIdentifier(
      async (sql) => (await fromDump.query<{ id: string }>(sql)).rows,
    );
    await fromDump.close();

    const dataDir = await mkdtemp(join(tmpdir(), 'agw-cluster-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const db = await openDatabase({ dataDir });
    expect(await systemIdentifier((sql) => db.query<{ id: string }>(sql))).toBe(dumped);
    await db.exec('create table kept (id int primary key); insert into kept values (1)');
    await db.close();
    expect((await modes(join(dataDir, 'pgdata'))).filter((mode) => (mode & 0o077) !== 0)).toEqual(
      [],
    );

    // Reopened: the cluster and what was written stay (the dump is not loaded again).
    const again = await openDatabase({ dataDir });
    cleanups.push(() => again.close());
    expect(await again.query('select id from kept')).toEqual([{ id: 1 }]);
  });
});
