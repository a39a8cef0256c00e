// Makes every file and directory the embedded database creates private to this user (0600 /
// 0700), whatever the process umask: installed in the embedded database's worker thread only.
//
// Why a shim: PGlite's file system (Emscripten NODEFS, @electric-sql/pglite 0.5.16) creates a
// file, then chmods it to the mode PostgreSQL asked for with Emscripten's own rules, which ignore
// the process umask: files opened through fopen (pg_internal.init, the stats file …) came out
// 0644, the reviewer saw 0666 on most of pgdata/ (issue 22, item 9). A worker thread
// cannot set the umask (it is per process, and Node refuses `process.umask(mask)` off the main
// thread), and setting it for the whole process would change the modes of every library user's
// files. NODEFS calls node:fs synchronously through the module object, and a worker has a node:fs
// of its own: so the mode-taking calls of this thread's node:fs keep the owner bits only. The
// thread runs nothing but PGlite and its socket server, which writes no files but the socket
// (0600 anyway).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const GROUP_AND_OTHER = 0o077;
let installed = false;

/** Clears group and other bits from every mode this thread's node:fs creates or sets. */
export function keepPGliteFilesPrivate(): void {
  if (installed) return;
  installed = true;
  const { chmodSync, fchmodSync, mkdirSync, openSync, writeFileSync } = fs;
  fs.chmodSync = (path, mode) => chmodSync(path, ownerOnly(mode));
  fs.fchmodSync = (fd, mode) => fchmodSync(fd, ownerOnly(mode));
  fs.mkdirSync = ((path: fs.PathLike, options?: fs.Mode | fs.MakeDirectoryOptions | null) =>
    mkdirSync(path, privateMkdirOptions(options))) as typeof fs.mkdirSync;
  fs.openSync = (path, flags, mode) => openSync(path, flags, ownerOnly(mode ?? 0o666));
  fs.writeFileSync = (file, data, options) =>
    writeFileSync(file, data, privateWriteOptions(options));
  // PGlite's NodeFS also imports node:fs by name (`import * as fs`): update those bindings too.
  syncBuiltinESMExports();
}

function ownerOnly(mode: fs.Mode): number {
  const bits = typeof mode === 'string' ? Number.parseInt(mode, 8) : mode;
  return bits & ~GROUP_AND_OTHER;
}

function privateMkdirOptions(
  options: fs.Mode | fs.MakeDirectoryOptions | null | undefined,
): fs.MakeDirectoryOptions {
  if (options === null || options === undefined) return { mode: 0o700 };
  if (typeof options === 'object') return { ...options, mode: ownerOnly(options.mode ?? 0o777) };
  return { mode: ownerOnly(options) };
}

function privateWriteOptions(options: fs.WriteFileOptions | undefined): fs.WriteFileOptions {
  if (options === undefined || options === null) return { mode: 0o600 };
  if (typeof options === 'string') return { encoding: options, mode: 0o600 };
  return { ...options, mode: ownerOnly(options.mode ?? 0o666) };
}
