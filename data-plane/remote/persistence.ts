// The data plane's last good snapshot on disk, so a restart serves at once even when the control
// plane is away. Written to a temporary file, flushed, then renamed over the old one: a crash
// leaves the old file or the new one, never half of one. A file that cannot be read or parsed is
// ignored with a warning (the data plane then waits for the control plane).
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';

export const SNAPSHOT_FILE = 'last-snapshot.json';
const FORMAT = 1;

export interface PersistedSnapshot {
  /** The control-plane process (epoch) that built the snapshot; '' when unknown. */
  readonly epoch: string;
  readonly snapshot: ConfigSnapshot;
}

export async function saveSnapshot(file: string, persisted: PersistedSnapshot): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const text = JSON.stringify({
    format: FORMAT,
    version: persisted.snapshot.version,
    epoch: persisted.epoch,
    savedAt: new Date().toISOString(),
    snapshot: persisted.snapshot,
  });
  try {
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

/** The persisted snapshot, or undefined when there is none or it is unusable (warned). */
export async function loadSnapshot(
  file: string,
  logger: Pick<Logger, 'warn'>,
): Promise<PersistedSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    logger.warn({ file, err: error }, 'persisted snapshot unreadable; ignored');
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    logger.warn({ file, reason: (error as Error).message }, 'persisted snapshot corrupt; ignored');
    return undefined;
  }
  const record = parsed as Record<string, unknown> | null;
  const snapshot = record?.snapshot as Record<string, unknown> | undefined;
  if (
    record?.format !== FORMAT ||
    typeof record.epoch !== 'string' ||
    !snapshot ||
    typeof snapshot !== 'object' ||
    !Number.isSafeInteger(snapshot.version) ||
    snapshot.version !== record.version ||
    !Array.isArray(snapshot.tenants)
  ) {
    logger.warn({ file }, 'persisted snapshot corrupt; ignored');
    return undefined;
  }
  return { epoch: record.epoch, snapshot: snapshot as unknown as ConfigSnapshot };
}
