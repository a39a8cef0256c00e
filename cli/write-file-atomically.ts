// Files the CLI writes (an audit export, its proofs file) appear whole or not at all: written
// beside their name, then renamed; a failure removes the partial file.
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Writes next to `file`, then renames: a failed export never leaves a partial file behind. */
export async function writeFileAtomically(
  file: string,
  text: AsyncIterable<string>,
): Promise<void> {
  const partial = `${file}.partial-${process.pid}`;
  const out: Writable = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline(Readable.from(text), out);
    await rename(partial, file);
  } catch (error) {
    await unlink(partial).catch(() => {});
    throw error;
  }
}
