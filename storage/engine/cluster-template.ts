// The empty database cluster a new data directory starts from. On first start the embedded
// database used to run PGlite's initdb, about 7.6 s of CPU (4.7 s wall) here, the bulk of a first
// `npm start`. `npm run build` now runs initdb once and dumps the result (`PGlite.dumpDataDir`,
// a tar of pgdata/) beside the built storage engine; a data directory without a cluster loads
// that dump instead (`loadDataDir`, about 2.5 s of CPU). The dump is what initdb leaves, nothing
// of ours: no table, no key, no tenant (those are the migrations' and the bootstrap's, run on
// every start as before), so every data directory still gets keys of its own. The dump is kept
// uncompressed (40 MB; 4.5 MB as gzip): it is read on every first start and by the test suite's
// databases, where unpacking gzip would spend part of the CPU the dump saves.
//
// The file name carries the PGlite version that wrote it: after a PGlite upgrade without a
// rebuild the name no longer matches and initdb runs as before. Run from the TypeScript sources
// (tests, `npm run dev`), the dump of the last build in dist/ is used when it is there.
import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { BUILT_ENGINE_DIRECTORY, pgliteVersion } from './pglite-package.js';
import { raiseWasmTieringBudget } from './wasm-tiering.js';

/** Where the build writes the dump for the installed PGlite (it may not exist). */
export async function clusterTemplatePath(): Promise<string> {
  return join(fileURLToPath(BUILT_ENGINE_DIRECTORY), `pglite-cluster-${await pgliteVersion()}.tar`);
}

/** The dump's path when the build wrote one for the installed PGlite, else null (run initdb). */
export async function findClusterTemplate(): Promise<string | null> {
  const path = await clusterTemplatePath();
  return access(path).then(
    () => path,
    () => null,
  );
}

/** Runs initdb in memory and writes its dump to `path` (written aside, then renamed). */
export async function writeClusterTemplate(path: string): Promise<void> {
  raiseWasmTieringBudget();
  const pglite = await PGlite.create();
  try {
    const dump = await pglite.dumpDataDir('none');
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, path);
  } finally {
    await pglite.close().catch(() => {});
  }
}
