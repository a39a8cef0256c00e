// Where the files the embedded database reads beside its code are: the installed PGlite package
// (its WebAssembly, its version) and the built storage engine (dist/storage/engine/, which holds
// the worker and the build's cluster dump), from the built modules or from the sources.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** PGlite's dist/ (the package resolves to dist/index.cjs for require). */
const PGLITE_DIST = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));

/** A file of PGlite's dist/, e.g. `pglite.wasm`. */
export function pgliteDistFile(name: string): string {
  return join(PGLITE_DIST, name);
}

let version: Promise<string> | undefined;

/** The installed @electric-sql/pglite version (its package exports no package.json). */
export function pgliteVersion(): Promise<string> {
  version ??= readFile(join(PGLITE_DIST, '..', 'package.json'), 'utf8').then(
    (text) => (JSON.parse(text) as { version: string }).version,
  );
  return version;
}

/** dist/storage/engine/: beside this module when built, under the repository's dist/ from sources. */
export const BUILT_ENGINE_DIRECTORY = new URL(
  import.meta.url.endsWith('.ts') ? '../../dist/storage/engine/' : './',
  import.meta.url,
);
