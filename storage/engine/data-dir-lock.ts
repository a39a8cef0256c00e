// PGlite runs PostgreSQL inside this process, so two processes opening one data directory would
// corrupt it. A lock file (created with O_EXCL) makes the second one fail with a clear error
// instead; it records the owner's pid and what the owner advertises (its URL) so other commands
// can talk to the running gateway. A lock whose pid no longer runs (SIGKILL, crash) is stale and
// taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewayError } from '../../shared/errors/index.js';

export const LOCK_FILE_NAME = 'gateway.lock';

export interface DataDirLockInfo {
  readonly pid: number;
  readonly startedAt: string;
  readonly [key: string]: unknown;
}

export interface DataDirLock {
  readonly path: string;
  /** Rewrites the owner information (e.g. once the listening URL is known). */
  update(owner: Readonly<Record<string, unknown>>): Promise<void>;
  release(): Promise<void>;
}

export async function acquireDataDirLock(
  dataDir: string,
  owner: Readonly<Record<string, unknown>>,
): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE_NAME);
  const info = (extra: Readonly<Record<string, unknown>>): string =>
    `${JSON.stringify({ ...extra, pid: process.pid, startedAt: new Date().toISOString() })}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(info(owner));
      await handle.close();
      let released = false;
      return {
        path,
        async update(next) {
          const handle = await open(path, 'w', 0o600);
          await handle.writeFile(info(next));
          await handle.close();
        },
        async release() {
          if (released) return;
          released = true;
          const current = await readDataDirLock(dataDir);
          if (current?.pid === process.pid) await unlink(path).catch(() => {});
        },
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw gatewayError(
          'STORAGE_DATA_DIR_UNWRITABLE',
          { what: 'the lock file', path, reason: (error as Error).message },
          { cause: error },
        );
      }
      const holder = await readDataDirLock(dataDir);
      if (holder && isProcessAlive(holder.pid) && holder.pid !== process.pid) {
        const where = typeof holder.url === 'string' ? ` serving ${holder.url}` : '';
        throw gatewayError('STORAGE_DATA_DIR_IN_USE', {
          dataDir,
          holder: `process ${holder.pid}${where}`,
        });
      }
      if (holder?.pid === process.pid) {
        throw gatewayError('STORAGE_DATA_DIR_IN_USE', { dataDir, holder: 'this process' });
      }
      await unlink(path).catch(() => {});
    }
  }
  throw gatewayError('STORAGE_DATA_DIR_IN_USE', {
    dataDir,
    holder: `another process (the lock ${path} cannot be taken)`,
  });
}

/** The current holder of a data directory, or undefined when nobody (alive) holds it. */
export async function readDataDirLock(dataDir: string): Promise<DataDirLockInfo | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const pid = (parsed as { pid?: unknown }).pid;
    if (typeof pid !== 'number' || !Number.isInteger(pid)) return undefined;
    return parsed as DataDirLockInfo;
  } catch {
    return undefined;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
