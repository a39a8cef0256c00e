// A 200,000-entry export (over 100 MB), generated on the fly as a Node stream and read through
// the reader and the verifier, verifies while the retained heap stays flat: neither the file nor
// the entries are ever held in memory.
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import {
  chainEntry,
  formatAuditEntry,
  readAuditExport,
  verifyAuditChain,
} from '../../../shared/audit/index.js';
import { entryInput } from './helpers.js';

const COUNT = 200_000;

// A forced collection makes heapUsed measure what is retained, not garbage awaiting collection.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function retainedHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

function* exportChunks(): Generator<string> {
  yield '[\n';
  let prev: string | null = null;
  for (let i = 0; i < COUNT; i++) {
    const entry = chainEntry(entryInput(i), prev);
    prev = entry.hash;
    yield `${i === 0 ? '' : ',\n'}${formatAuditEntry(entry)}`;
  }
  yield '\n]\n';
}

it('verifies a 200k-entry export streamed through the reader with flat memory', async () => {
  const chunks = exportChunks();
  let exportBytes = 0;
  // Like a file: about 64 KiB per read, delivered on a later turn of the event loop.
  const stream = new Readable({
    read() {
      setImmediate(() => {
        let text = '';
        let next = chunks.next();
        while (!next.done) {
          text += next.value;
          if (text.length >= 65_536) break;
          next = chunks.next();
        }
        exportBytes += Buffer.byteLength(text);
        if (text !== '') this.push(text);
        if (next.done) this.push(null);
      });
    },
  });
  const baseline = retainedHeap();
  let growth = 0;
  let seen = 0;
  let lastHash = '';
  const entries = (async function* () {
    for await (const entry of readAuditExport(stream)) {
      if (++seen % 25_000 === 0) growth = Math.max(growth, retainedHeap() - baseline);
      lastHash = (entry as { hash: string }).hash;
      yield entry;
    }
  })();

  const result = await verifyAuditChain(entries);

  expect(result).toMatchObject({ ok: true, count: COUNT, head: lastHash });
  expect(exportBytes).toBeGreaterThan(100 * 1024 * 1024);
  expect(growth).toBeLessThan(4 * 1024 * 1024);
}, 60_000);
