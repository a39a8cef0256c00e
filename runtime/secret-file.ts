// Writes a secret (an admin API key, a data-plane credential) to a file only its owner can read.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface WriteSecretFileOptions {
  /** Replace a file that exists (default true); false fails with EEXIST and leaves it as it was. */
  readonly overwrite?: boolean;
}

export async function writeSecretFile(
  file: string,
  secret: string,
  options: WriteSecretFileOptions = {},
): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // 'wx' creates or fails in one step: no window between a check and the write.
  const flag = options.overwrite === false ? 'wx' : 'w';
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag });
  // writeFile's mode applies only when it creates the file; enforce it for an existing one too.
  await chmod(file, 0o600);
}
