// The append-only file sink (AGENT_GATEWAY_AUDIT_SINK_FILE): every checkpoint's signed note, one
// after another, each followed by a blank line, flushed to disk before the sink's progress moves.
// Put it on another volume than the database (a mounted bucket, a remote file system): that
// is what makes it an anchor. The file is only ever appended to; a missing directory is a
// failure the runner retries (the volume may come back), never created here.
//
// Reading it back is unambiguous: a note's text has no blank line and each signature line
// starts with "— ", so a blank line after signature lines ends a note.
import { open } from 'node:fs/promises';
import type { StoredCheckpoint } from '../../storage/tables/audit-checkpoints.js';
import type { CheckpointSink } from './sinks.js';

export class FileCheckpointSink implements CheckpointSink {
  readonly name: string;
  readonly kind = 'file';
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
    this.name = `file:${path}`;
  }

  async deliver(checkpoint: StoredCheckpoint): Promise<void> {
    const file = await open(this.#path, 'a', 0o640);
    try {
      await file.appendFile(`${checkpoint.note}\n`, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
  }
}

/** The signed notes of a sink file, in the order they were appended. */
export function readSinkFile(text: string): string[] {
  const notes: string[] = [];
  let current: string[] = [];
  let signatures = false;
  for (const line of text.split('\n')) {
    if (line === '' && signatures) {
      notes.push(`${current.join('\n')}\n`);
      current = [];
      signatures = false;
      continue;
    }
    if (line === '' && current.length > 0) {
      current.push('');
      continue;
    }
    if (line.startsWith('\u2014 ')) signatures = true;
    if (line !== '') current.push(line);
  }
  return notes;
}
