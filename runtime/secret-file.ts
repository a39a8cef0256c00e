// Writes a secret (an admin API key, a data-plane credential) to a file only its owner can read.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function writeSecretFile(file: string, secret: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  // writeFile's mode applies only when it creates the file; enforce it for an existing one too.
  await chmod(file, 0o600);
}
