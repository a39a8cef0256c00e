// Keeps the gateway's data directory private to its owner: the directory and every directory in
// it 0700, every file 0600. It holds the embedded database (the WAL has recent rows in clear:
// system prompts, kill reasons), the token signing key and the master key, so no other local user
// may read or write any of it.
//
// PGlite's file system (Emscripten NODEFS) creates files with Node's default mode 0666 and leaves
// the rest to the process umask, which a worker thread cannot change; the CLI therefore sets the
// umask to 0077 (cli/main.ts), as PostgreSQL itself does. This module covers what the umask cannot:
// a directory made before that (or by a library user with another umask) is tightened at start.
// Only group and other bits are removed; symbolic links are neither followed nor changed.
import type { Dirent } from 'node:fs';
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewayError } from '../../shared/errors/index.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dataDir` (0700) if missing (unless `create` is false) and tightens it and everything
 * under it; resolves with how many entries had group or other permissions (0 for a private tree).
 */
export async function makeDataDirPrivate(
  dataDir: string,
  options: { readonly create?: boolean } = {},
): Promise<number> {
  try {
    if (options.create !== false) await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    let tightened = await tighten(dataDir, true);
    tightened += await tightenTree(dataDir);
    return tightened;
  } catch (error) {
    throw gatewayError(
      'STORAGE_DATA_DIR_UNWRITABLE',
      {
        what: 'the permissions of the data directory',
        path: dataDir,
        reason: (error as Error).message,
      },
      { cause: error },
    );
  }
}

async function tightenTree(dir: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let tightened = 0;
  for (const entry of entries) {
    if (entry.isSymbolicLink()) continue;
    const path = join(dir, entry.name);
    const isDir = entry.isDirectory();
    tightened += await tighten(path, isDir);
    if (isDir) tightened += await tightenTree(path);
  }
  return tightened;
}

/** 1 when `path` lost group/other permissions, 0 when it had none (or vanished meanwhile). */
async function tighten(path: string, isDir: boolean): Promise<number> {
  try {
    const { mode } = await lstat(path);
    if ((mode & 0o077) === 0) return 0;
    await chmod(path, isDir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE);
    return 1;
  } catch (error) {
    // The database may remove a file (a recycled WAL segment) while the tree is walked.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}
