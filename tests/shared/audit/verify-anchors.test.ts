// verifyAnchors over chains built with chainEntry: an export agrees with the checkpoints cut from
// it; a history rewritten after a checkpoint (entries removed, the chain recomputed with the
// project's own functions, which the chain check alone accepts) does not; proofs anchor what
// roots cannot reach; a split view and every malformed input are named.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AUDIT_PROOFS_FORMAT,
  type AuditEntry,
  type AuditProofs,
  auditLeafHash,
  chainEntry,
  ExportTreeTap,
  parseAuditProofs,
  verifyAnchors,
  verifyAuditChain,
  wantedByAnchors,
} from '../../../shared/audit/index.js';
import {
  consistencyProofRanges,
  formatCheckpoint,
  formatVerifierKey,
  inclusionProofRanges,
  MerkleFrontier,
  nodesOfRanges,
  noteSigner,
  parseVerifierKey,
  signNote,
  type TreeNode,
} from '../../../shared/tlog/index.js';
import { buildChain, entryInput, TENANT } from './helpers.js';

const signer = noteSigner('gw.example/audit', randomBytes(32));
const key = parseVerifierKey(formatVerifierKey(signer.name, signer.publicKey));
if (typeof key === 'string') throw new Error(key);
const chain = buildChain(40);

/** The tree over a chain: checkpoints and proofs as the gateway makes them. */
function treeOf(entries: readonly AuditEntry[]) {
  const frontier = new MerkleFrontier();
  const stored = new Map<string, Uint8Array>();
  const roots: Uint8Array[] = [];
  for (const entry of entries) {
    for (const node of frontier.append(auditLeafHash(entry.hash))) {
      stored.set(`${node.level}/${node.index}`, node.hash);
    }
    roots.push(frontier.root());
  }
  const read = (node: TreeNode) => stored.get(`${node.level}/${node.index}`) as Uint8Array;
  const b64 = (hashes: Uint8Array[]) => hashes.map((hash) => Buffer.from(hash).toString('base64'));
  return {
    checkpoint: (size: number, tenant = TENANT, by = signer) =>
      signNote(
        formatCheckpoint({
          origin: `${by.name}/${tenant}`,
          size,
          rootHash: roots[size - 1] as Uint8Array,
        }),
        [by],
      ),
    inclusion: (index: number, size: number) =>
      b64(nodesOfRanges(inclusionProofRanges(index, size)).fold(read)),
    consistency: (first: number, second: number) =>
      b64(nodesOfRanges(consistencyProofRanges(first, second)).fold(read)),
  };
}
const tree = treeOf(chain);

async function anchor(
  entries: readonly AuditEntry[],
  notes: readonly string[],
  options: { proofs?: AuditProofs; partial?: boolean; keys?: (typeof key)[] } = {},
) {
  const wanted = wantedByAnchors(notes, options.proofs);
  const tap = new ExportTreeTap(wanted.sizes, wanted.ids);
  const chainResult = await verifyAuditChain(tap.tap(entries), {
    partial: options.partial ?? false,
  });
  expect(chainResult.ok).toBe(true);
  return verifyAnchors({
    checkpoints: notes.map((note, i) => ({ source: `cp${i + 1}`, note })),
    keys: (options.keys ?? [key]) as never,
    proofs: options.proofs,
    tap,
    tenantId: entries[0]?.tenantId ?? null,
    partial: options.partial ?? false,
  });
}

function proofsFile(overrides: Partial<AuditProofs>): AuditProofs {
  return {
    format: AUDIT_PROOFS_FORMAT,
    tenantId: TENANT,
    checkpoints: [],
    inclusion: [],
    consistency: [],
    ...overrides,
  };
}

/** The attack: drop entries, recompute every hash and seal after them with chainEntry. */
function rewrite(entries: readonly AuditEntry[], drop: (i: number) => boolean): AuditEntry[] {
  const out: AuditEntry[] = [];
  let prev: string | null = null;
  entries.forEach((_, i) => {
    if (drop(i)) return;
    const entry = chainEntry(entryInput(i), prev);
    out.push(entry);
    prev = entry.hash;
  });
  return out;
}

describe('verifyAnchors', () => {
  it('matches every checkpoint the export reaches', async () => {
    const result = await anchor(chain, [
      tree.checkpoint(10),
      tree.checkpoint(40),
      tree.checkpoint(1),
    ]);
    expect(result).toMatchObject({ ok: true, anchoredEntries: 40, findings: [] });
    expect(result.checkpoints.map((c) => c.status)).toEqual(['matched', 'matched', 'matched']);
    expect(result.checkpoints[0]?.signedBy).toBe(
      `gw.example/audit+${signer.keyId.toString(16).padStart(8, '0')}`,
    );
  });

  it('fails a history rewritten after the checkpoint, which the chain check alone accepts', async () => {
    const rewritten = rewrite(chain, (i) => i % 3 === 0 && i > 0);
    expect(await verifyAuditChain(rewritten)).toMatchObject({ ok: true });
    const result = await anchor(rewritten, [tree.checkpoint(2), tree.checkpoint(20)]);
    expect(result.ok).toBe(false);
    expect(result.findings[0]).toMatchObject({
      code: 'AUDIT_CHECKPOINT_ROOT_MISMATCH',
      checkpoint: 'cp2',
    });
    expect(result.findings[0]?.message).toContain('among entries 3 to 20');
    expect(result.checkpoints.map((c) => c.status)).toEqual(['matched', 'failed']);
  });

  it('fails a checkpoint beyond the export without a proof, proves it with one', async () => {
    const early = chain.slice(0, 25);
    const beyond = await anchor(early, [tree.checkpoint(40)]);
    expect(beyond.findings[0]).toMatchObject({
      code: 'AUDIT_CHECKPOINT_NOT_REACHED',
      checkpoint: 'cp1',
    });
    const proofs = proofsFile({
      consistency: [{ first: 25, second: 40, hashes: tree.consistency(25, 40) }],
    });
    const proven = await anchor(early, [tree.checkpoint(40)], { proofs });
    expect(proven).toMatchObject({ ok: true, anchoredEntries: 25 });
    expect(proven.checkpoints[0]?.status).toBe('proven');
    // A truncated rewrite is not the start of the signed tree, whatever proof comes with it.
    const rewritten = rewrite(chain.slice(0, 25), (i) => i === 7);
    const forged = await anchor(rewritten, [tree.checkpoint(40)], {
      proofs: proofsFile({
        consistency: [{ first: 24, second: 40, hashes: tree.consistency(24, 40) }],
      }),
    });
    expect(forged.findings[0]).toMatchObject({
      code: 'AUDIT_PROOF_INVALID',
      proof: 'consistency[0]',
    });
  });

  it('anchors a slice with an inclusion proof of its last entry, and reports checkpoints it cannot reach', async () => {
    const slice = chain.slice(10, 30);
    const proofs = proofsFile({
      checkpoints: [tree.checkpoint(35)],
      inclusion: [
        { entryId: 'evt_29', treeSize: 35, leafIndex: 29, hashes: tree.inclusion(29, 35) },
      ],
    });
    const result = await anchor(slice, [tree.checkpoint(5)], { proofs, partial: true });
    expect(result).toMatchObject({ ok: true, anchoredEntries: 20 });
    expect(result.checkpoints.map((c) => [c.source, c.status])).toEqual([
      ['cp1', 'not-reached'],
      ['proofs file checkpoint #1', 'proven'],
    ]);
    const wrongLeaf = proofsFile({
      checkpoints: [tree.checkpoint(35)],
      inclusion: [
        { entryId: 'evt_28', treeSize: 35, leafIndex: 29, hashes: tree.inclusion(29, 35) },
      ],
    });
    const failed = await anchor(slice, [], { proofs: wrongLeaf, partial: true });
    expect(failed.findings[0]).toMatchObject({
      code: 'AUDIT_PROOF_INVALID',
      proof: 'inclusion[0]',
    });
  });

  it('names a split view: one size, two roots; or a consistency proof that does not link them', async () => {
    const other = treeOf(rewrite(chain, (i) => i === 3));
    const result = await anchor(chain.slice(0, 5), [tree.checkpoint(30), other.checkpoint(30)]);
    expect(result.findings.map((f) => f.code)).toContain('AUDIT_CHECKPOINTS_INCONSISTENT');
    const unlinked = await anchor(chain.slice(0, 2), [tree.checkpoint(2), other.checkpoint(30)], {
      proofs: proofsFile({
        consistency: [{ first: 2, second: 30, hashes: tree.consistency(2, 30) }],
      }),
    });
    expect(unlinked.findings.map((f) => f.code)).toContain('AUDIT_PROOF_INVALID');
  });

  it('refuses checkpoints that are unsigned, signed by another key, or of another tenant', async () => {
    const stranger = noteSigner('gw.example/audit', randomBytes(32));
    const result = await anchor(chain, [
      'not a note',
      tree.checkpoint(10, TENANT, stranger),
      tree.checkpoint(10, 'ten_other'),
    ]);
    expect(result.findings.map((f) => [f.code, f.checkpoint])).toEqual([
      ['AUDIT_CHECKPOINT_INVALID', 'cp1'],
      ['AUDIT_CHECKPOINT_SIGNATURE_INVALID', 'cp2'],
      ['AUDIT_CHECKPOINT_TENANT_MISMATCH', 'cp3'],
    ]);
    // A retired key still verifies the checkpoints it signed.
    const retired = parseVerifierKey(formatVerifierKey(stranger.name, stranger.publicKey));
    const both = await anchor(chain, [tree.checkpoint(10, TENANT, stranger)], {
      keys: [key, retired as never],
    });
    expect(both.ok).toBe(true);
  });

  it('parses proofs files and names what is wrong with one', () => {
    expect(parseAuditProofs(proofsFile({}))).toMatchObject({ format: AUDIT_PROOFS_FORMAT });
    expect(parseAuditProofs([])).toBe('a proofs file is a JSON object');
    expect(parseAuditProofs({ ...proofsFile({}), format: 'x' })).toBe(
      `format is not "${AUDIT_PROOFS_FORMAT}"`,
    );
    expect(
      parseAuditProofs(
        proofsFile({ inclusion: [{ entryId: 'e', treeSize: 0, leafIndex: 0, hashes: [] }] }),
      ),
    ).toBe('inclusion[0] is not {entryId, treeSize, leafIndex, hashes}');
    expect(
      parseAuditProofs(proofsFile({ consistency: [{ first: 1, second: 2, hashes: ['AAAA'] }] })),
    ).toBe('consistency[0] is not {first, second, hashes}');
  });
});
