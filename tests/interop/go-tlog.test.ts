// The gateway's transparency-log primitives against Go's golang.org/x/mod/sumdb: the same roots
// and proofs as tlog, notes that note.Open accepts, and Go's notes accepted in turn.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  consistencyProofRanges,
  formatCheckpoint,
  formatVerifierKey,
  inclusionProofRanges,
  leafHash,
  MerkleFrontier,
  nodesOfRanges,
  noteSignedBy,
  noteSigner,
  parseNote,
  parseVerifierKey,
  signNote,
  type TreeNode,
} from '../../shared/tlog/index.js';
import { goTlog, goTlogBinary, goTlogMissing } from '../support/go-tlog.js';

const missing = goTlogMissing();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe.skipIf(missing !== undefined)("Go's x/mod/sumdb accepts the gateway's log", () => {
  beforeAll(async () => {
    await goTlogBinary();
  }, 120_000);

  const leaves = Array.from({ length: 37 }, () => Uint8Array.from(randomBytes(32)));
  const frontier = new MerkleFrontier();
  const stored = new Map<string, Uint8Array>();
  const roots: Uint8Array[] = [];
  for (const data of leaves) {
    for (const node of frontier.append(leafHash(data))) {
      stored.set(`${node.level}/${node.index}`, node.hash);
    }
    roots.push(frontier.root());
  }
  const read = (node: TreeNode) => stored.get(`${node.level}/${node.index}`) as Uint8Array;
  const inclusion = (index: number, size: number) =>
    nodesOfRanges(inclusionProofRanges(index, size)).fold(read).map(b64);
  const consistency = (first: number, second: number) =>
    nodesOfRanges(consistencyProofRanges(first, second)).fold(read).map(b64);

  it('computes the roots and proofs tlog computes, for every size, leaf and pair', async () => {
    const go = await goTlog<{
      roots: string[];
      inclusions: Record<string, string[]>;
      consistencies: Record<string, string[]>;
    }>({ mode: 'tree', leaves: leaves.map((leaf) => Buffer.from(leaf).toString('hex')) });
    expect(go.roots).toEqual(roots.map(b64));
    for (let size = 1; size <= leaves.length; size++) {
      for (let index = 0; index < size; index++) {
        expect(inclusion(index, size), `inclusion ${index}/${size}`).toEqual(
          go.inclusions[`${index}/${size}`],
        );
      }
      for (let first = 1; first <= size; first++) {
        expect(consistency(first, size), `consistency ${first}/${size}`).toEqual(
          go.consistencies[`${first}/${size}`],
        );
      }
    }
  });

  it('signs checkpoints that note.Open verifies, and proofs that CheckRecord and CheckTree accept', async () => {
    const signer = noteSigner('gateway.example/audit', randomBytes(32));
    const origin = 'gateway.example/audit/3f1c0d9e-0000-4000-8000-000000000001';
    const notes = [5, 16, 37].map((size) =>
      signNote(formatCheckpoint({ origin, size, rootHash: roots[size - 1] as Uint8Array }), [
        signer,
      ]),
    );
    const tampered = (notes[0] as string).replace('\n5\n', '\n6\n');
    const go = await goTlog<{
      notes: { ok: boolean; text?: string; error?: string }[];
      inclusions: boolean[];
      consistencies: boolean[];
    }>({
      mode: 'verify',
      verifierKey: formatVerifierKey(signer.name, signer.publicKey),
      notes: [...notes, tampered],
      inclusions: [
        [0, 1],
        [4, 5],
        [12, 37],
        [36, 37],
      ].map(([index, size]) => ({
        index,
        treeSize: size,
        leaf: b64(read({ level: 0, index: index as number })),
        root: b64(roots[(size as number) - 1] as Uint8Array),
        hashes: inclusion(index as number, size as number),
      })),
      consistencies: [
        [1, 37],
        [5, 16],
        [16, 37],
        [37, 37],
      ].map(([first, second]) => ({
        first,
        second,
        firstRoot: b64(roots[(first as number) - 1] as Uint8Array),
        secondRoot: b64(roots[(second as number) - 1] as Uint8Array),
        hashes: consistency(first as number, second as number),
      })),
    });
    expect(go.notes.slice(0, 3).map((note) => note.ok)).toEqual([true, true, true]);
    expect(go.notes[2]?.text).toBe(`${origin}\n37\n${b64(roots[36] as Uint8Array)}\n`);
    expect(go.notes[3]).toMatchObject({ ok: false });
    expect(go.inclusions).toEqual([true, true, true, true]);
    expect(go.consistencies).toEqual([true, true, true, true]);
  });

  it("verifies notes Go's note package signs", async () => {
    const go = await goTlog<{ verifierKey: string; note: string }>({
      mode: 'sign',
      name: 'witness.example/w1',
      text: 'origin.example/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n',
    });
    const key = parseVerifierKey(go.verifierKey);
    const note = parseNote(go.note);
    if (typeof key === 'string' || typeof note === 'string') throw new Error(`${key} ${note}`);
    expect(noteSignedBy(note, key)).toBe(true);
    const forged = parseNote(go.note.replace('\n3\n', '\n4\n'));
    if (typeof forged === 'string') throw new Error(forged);
    expect(noteSignedBy(forged, key)).toBe(false);
  });
});
