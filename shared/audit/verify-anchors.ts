// Anchoring an export to signed checkpoints (docs/audit.md, "Checkpoints"): what `audit verify
// --checkpoint` adds to the chain check. The hash chain shows an export is internally whole; a
// checkpoint signed by the audit key shows which history the gateway committed to, so a history
// rewritten after the checkpoint was cut (entries removed and the chain recomputed) no longer
// hashes to its root.
//
// For an export that starts at genesis, the root of its first n entries is computed as it streams
// by (ExportTreeTap, O(log n) memory) and compared with every checkpoint of size n up to the
// export's length; a checkpoint beyond the export needs a consistency proof from the export's
// length (the proofs file `audit export --proofs` writes), or it fails as not reached: an export
// shorter than a signed checkpoint is what a truncation looks like. A slice (--partial) has no
// roots: an inclusion proof of one of its entries anchors it and, through the chain, every entry
// before it in the slice; checkpoints no proof reaches are reported, not failed. Two checkpoints
// of one size with different roots, or a consistency proof between two checkpoints that fails,
// are a split view. Findings come in the order the checks run, the first one names what to look
// at. Pure.
import {
  cosignedAt,
  EMPTY_TREE_ROOT,
  MerkleFrontier,
  type NoteVerifierKey,
  noteSignedBy,
  parseCheckpoint,
  parseNote,
  verifyConsistency,
  verifyInclusion,
  type WitnessKey,
} from '../tlog/index.js';
import type { AuditIssueCode } from './codes.js';
import { auditLeafHash } from './tree.js';

export const AUDIT_PROOFS_FORMAT = 'agent-gateway-audit-proofs/v1';

/** The proofs file beside an export: never inside it, so the export stays byte for byte. */
export interface AuditProofs {
  readonly format: typeof AUDIT_PROOFS_FORMAT;
  readonly tenantId: string;
  /** Signed checkpoints the proofs refer to (as GET /api/v1/audit/checkpoint serves them). */
  readonly checkpoints: readonly string[];
  readonly inclusion: readonly {
    readonly entryId: string;
    readonly treeSize: number;
    readonly leafIndex: number;
    readonly hashes: readonly string[];
  }[];
  readonly consistency: readonly {
    readonly first: number;
    readonly second: number;
    readonly hashes: readonly string[];
  }[];
}

const BASE64_HASH = /^[A-Za-z0-9+/]{43}=$/;
const MAX_PROOF_HASHES = 128;

function isSize(value: unknown, min: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min;
}

function isHashList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_PROOF_HASHES &&
    value.every((hash) => typeof hash === 'string' && BASE64_HASH.test(hash))
  );
}

/** The proofs file's content, or a sentence naming what is wrong with it. */
export function parseAuditProofs(value: unknown): AuditProofs | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'a proofs file is a JSON object';
  }
  const record = value as Record<string, unknown>;
  if (record.format !== AUDIT_PROOFS_FORMAT) return `format is not "${AUDIT_PROOFS_FORMAT}"`;
  if (typeof record.tenantId !== 'string') return 'tenantId is not a string';
  const { checkpoints, inclusion, consistency } = record;
  if (!Array.isArray(checkpoints) || !checkpoints.every((note) => typeof note === 'string')) {
    return 'checkpoints is not an array of signed notes';
  }
  if (!Array.isArray(inclusion)) return 'inclusion is not an array';
  for (const [i, proof] of inclusion.entries()) {
    const p = proof as Record<string, unknown>;
    if (
      typeof p?.entryId !== 'string' ||
      !isSize(p.treeSize, 1) ||
      !isSize(p.leafIndex, 0) ||
      !isHashList(p.hashes)
    ) {
      return `inclusion[${i}] is not {entryId, treeSize, leafIndex, hashes}`;
    }
  }
  if (!Array.isArray(consistency)) return 'consistency is not an array';
  for (const [i, proof] of consistency.entries()) {
    const p = proof as Record<string, unknown>;
    if (!isSize(p?.first, 1) || !isSize(p.second, 1) || !isHashList(p.hashes)) {
      return `consistency[${i}] is not {first, second, hashes}`;
    }
  }
  return record as unknown as AuditProofs;
}

/**
 * Watches an export stream by: the root of its first n entries for the sizes asked for, its
 * root, its length, and the hashes and positions of the entries proofs name.
 */
export class ExportTreeTap {
  readonly #frontier = new MerkleFrontier();
  readonly #sizes: ReadonlySet<number>;
  readonly #ids: ReadonlySet<string>;
  readonly #roots = new Map<number, Uint8Array>([[0, EMPTY_TREE_ROOT]]);
  readonly #entries = new Map<string, { index: number; hash: string }>();
  #usable = true;

  constructor(sizes: Iterable<number>, ids: Iterable<string>) {
    this.#sizes = new Set(sizes);
    this.#ids = new Set(ids);
  }

  /** Passes the entries through, watching them. */
  async *tap(source: Iterable<unknown> | AsyncIterable<unknown>): AsyncGenerator<unknown> {
    for await (const value of source) {
      this.#observe(value);
      yield value;
    }
  }

  #observe(value: unknown): void {
    const entry = value as { id?: unknown; hash?: unknown } | null;
    const hash = entry?.hash;
    // A malformed entry fails the chain check; roots past it mean nothing.
    if (!this.#usable || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
      this.#usable = false;
      return;
    }
    const index = this.#frontier.size;
    if (typeof entry?.id === 'string' && this.#ids.has(entry.id)) {
      this.#entries.set(entry.id, { index, hash });
    }
    this.#frontier.append(auditLeafHash(hash));
    const size = this.#frontier.size;
    if (this.#sizes.has(size)) this.#roots.set(size, this.#frontier.root());
  }

  get count(): number {
    return this.#frontier.size;
  }

  rootAt(size: number): Uint8Array | undefined {
    return this.#roots.get(size);
  }

  root(): Uint8Array {
    return this.#frontier.root();
  }

  entry(id: string): { readonly index: number; readonly hash: string } | undefined {
    return this.#entries.get(id);
  }
}

/** Every tree size and entry id the checkpoints and proofs may need, for the tap. */
export function wantedByAnchors(
  notes: readonly string[],
  proofs: AuditProofs | undefined,
): { sizes: number[]; ids: string[] } {
  const sizes = new Set<number>();
  for (const note of [...notes, ...(proofs?.checkpoints ?? [])]) {
    const parsed = parseNote(note);
    const checkpoint = typeof parsed === 'string' ? parsed : parseCheckpoint(parsed.text);
    if (typeof checkpoint !== 'string') sizes.add(checkpoint.size);
  }
  for (const proof of proofs?.consistency ?? []) sizes.add(proof.first);
  return { sizes: [...sizes], ids: (proofs?.inclusion ?? []).map((proof) => proof.entryId) };
}

export interface CheckpointSource {
  /** Where it came from, as the operator named it (a file, a URL, `proofs file #1`). */
  readonly source: string;
  readonly note: string;
}

export interface AnchorFinding {
  readonly code: AuditIssueCode;
  readonly message: string;
  /** The checkpoint concerned (its source). */
  readonly checkpoint?: string;
  /** The proof concerned (`inclusion[0]`, `consistency[1]`). */
  readonly proof?: string;
}

export type CheckpointStatus =
  /** Its root is the root of the export's first treeSize entries. */
  | 'matched'
  /** A proof shows the export (or an entry of it) in its tree. */
  | 'proven'
  /** Beyond a slice, and no proof reaches it. */
  | 'not-reached'
  | 'failed';

export interface CheckpointOutcome {
  readonly source: string;
  readonly treeSize: number | null;
  readonly rootHash: string | null;
  /** `<key name>+<key id>` of the key that signed it. */
  readonly signedBy: string | null;
  /** The witnesses (of the keys given) whose valid cosignature/v1 it carries, by name. */
  readonly cosignedBy: readonly string[];
  readonly status: CheckpointStatus;
}

export interface AnchorResult {
  readonly ok: boolean;
  readonly checkpoints: readonly CheckpointOutcome[];
  /** Entries of the export (from its start) some verified checkpoint vouches for. */
  readonly anchoredEntries: number;
  readonly findings: readonly AnchorFinding[];
}

export interface VerifyAnchorsInput {
  readonly checkpoints: readonly CheckpointSource[];
  readonly keys: readonly NoteVerifierKey[];
  /** Witness keys: their cosignatures are reported (none is required). */
  readonly witnessKeys?: readonly WitnessKey[] | undefined;
  readonly proofs?: AuditProofs | undefined;
  readonly tap: ExportTreeTap;
  /** The export's tenant (null for an empty export). */
  readonly tenantId: string | null;
  /** The export is a slice: it may not start at genesis, so it has no roots. */
  readonly partial: boolean;
}

interface Valid {
  readonly index: number;
  readonly size: number;
  readonly root: Uint8Array;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;
const decode = (hashes: readonly string[]) => hashes.map((hash) => Buffer.from(hash, 'base64'));

export function verifyAnchors(input: VerifyAnchorsInput): AnchorResult {
  const { tap, proofs, partial } = input;
  const findings: AnchorFinding[] = [];
  const sources: CheckpointSource[] = [
    ...input.checkpoints,
    ...(proofs?.checkpoints ?? []).map((note, i) => ({
      source: `proofs file checkpoint #${i + 1}`,
      note,
    })),
  ];
  const outcomes: { -readonly [K in keyof CheckpointOutcome]: CheckpointOutcome[K] }[] = [];
  const valid: Valid[] = [];

  if (proofs && input.tenantId !== null && proofs.tenantId !== input.tenantId) {
    findings.push({
      code: 'AUDIT_PROOF_INVALID',
      message: `the proofs file is for tenant ${proofs.tenantId}, the export for ${input.tenantId}`,
    });
  }

  // 1. Each checkpoint: a signed note, signed by a trusted key, a checkpoint of this tenant.
  for (const [index, { source, note }] of sources.entries()) {
    const outcome = {
      source,
      treeSize: null,
      rootHash: null,
      signedBy: null,
      cosignedBy: [],
      status: 'failed',
    } as (typeof outcomes)[number];
    outcomes.push(outcome);
    const parsed = parseNote(note);
    const checkpoint = typeof parsed === 'string' ? parsed : parseCheckpoint(parsed.text);
    if (typeof parsed === 'string' || typeof checkpoint === 'string') {
      findings.push({
        code: 'AUDIT_CHECKPOINT_INVALID',
        checkpoint: source,
        message: `${source} is not a signed checkpoint: ${typeof parsed === 'string' ? parsed : checkpoint}`,
      });
      continue;
    }
    outcome.treeSize = checkpoint.size;
    outcome.rootHash = b64(checkpoint.rootHash);
    const key = input.keys.find((candidate) => noteSignedBy(parsed, candidate));
    if (key === undefined) {
      findings.push({
        code: 'AUDIT_CHECKPOINT_SIGNATURE_INVALID',
        checkpoint: source,
        message: `${source} carries no valid signature of the ${input.keys.length === 1 ? 'verifier key' : `${input.keys.length} verifier keys`} given`,
      });
      continue;
    }
    outcome.signedBy = `${key.name}+${key.keyId.toString(16).padStart(8, '0')}`;
    outcome.cosignedBy = (input.witnessKeys ?? [])
      .filter((witness) => cosignedAt(parsed.text, parsed.signatures, witness) !== null)
      .map((witness) => witness.name);
    const expected = input.tenantId === null ? null : `${key.name}/${input.tenantId}`;
    if (
      expected === null
        ? !checkpoint.origin.startsWith(`${key.name}/`)
        : checkpoint.origin !== expected
    ) {
      findings.push({
        code: 'AUDIT_CHECKPOINT_TENANT_MISMATCH',
        checkpoint: source,
        message: `${source} is a checkpoint of ${checkpoint.origin}, not of ${expected ?? `${key.name}/<tenant>`}`,
      });
      continue;
    }
    valid.push({ index, size: checkpoint.size, root: checkpoint.rootHash });
  }

  // 2. A split view: two checkpoints of one size with different roots.
  const bySize = new Map<number, Valid>();
  for (const checkpoint of valid) {
    const seen = bySize.get(checkpoint.size);
    if (seen === undefined) {
      bySize.set(checkpoint.size, checkpoint);
    } else if (!sameBytes(seen.root, checkpoint.root)) {
      findings.push({
        code: 'AUDIT_CHECKPOINTS_INCONSISTENT',
        checkpoint: sources[checkpoint.index]?.source,
        message: `${sources[checkpoint.index]?.source} and ${sources[seen.index]?.source} both sign tree size ${checkpoint.size} with different roots: two histories were shown`,
      });
      (outcomes[checkpoint.index] as (typeof outcomes)[number]).status = 'failed';
    }
  }

  // 3. Against the export.
  let anchoredEntries = 0;
  const proven = new Set<number>();
  const consistencyProofs = proofs?.consistency ?? [];
  if (!partial) {
    const length = tap.count;
    let lastMatched = 0;
    for (const checkpoint of [...valid].sort((a, b) => a.size - b.size)) {
      const outcome = outcomes[checkpoint.index] as (typeof outcomes)[number];
      const source = sources[checkpoint.index]?.source;
      if (checkpoint.size <= length) {
        const root = tap.rootAt(checkpoint.size);
        if (root !== undefined && sameBytes(root, checkpoint.root)) {
          outcome.status = 'matched';
          lastMatched = checkpoint.size;
          anchoredEntries = Math.max(anchoredEntries, checkpoint.size);
        } else {
          findings.push({
            code: 'AUDIT_CHECKPOINT_ROOT_MISMATCH',
            checkpoint: source,
            message: `the export's first ${checkpoint.size} entries do not hash to the root ${source} signs: history was rewritten among entries ${lastMatched + 1} to ${checkpoint.size} (1-based)`,
          });
        }
      } else {
        const index = consistencyProofs.findIndex(
          (proof) => proof.first === length && proof.second === checkpoint.size,
        );
        const proof = consistencyProofs[index];
        if (proof === undefined) {
          findings.push({
            code: 'AUDIT_CHECKPOINT_NOT_REACHED',
            checkpoint: source,
            message: `${source} covers ${checkpoint.size} entries, the export ${length}, and no consistency proof from ${length} to ${checkpoint.size} was given`,
          });
        } else if (
          verifyConsistency(
            length,
            checkpoint.size,
            tap.root(),
            checkpoint.root,
            decode(proof.hashes),
          )
        ) {
          outcome.status = 'proven';
          proven.add(index);
          anchoredEntries = length;
        } else {
          findings.push({
            code: 'AUDIT_PROOF_INVALID',
            proof: `consistency[${index}]`,
            checkpoint: source,
            message: `consistency[${index}] does not show the export's ${length} entries as the start of ${source}'s tree: the export is not the history that checkpoint signs`,
          });
        }
      }
    }
  }

  // 4. Inclusion proofs (a slice's anchor; checked in any export).
  for (const [index, proof] of (proofs?.inclusion ?? []).entries()) {
    const name = `inclusion[${index}]`;
    const entry = tap.entry(proof.entryId);
    const checkpoint = bySize.get(proof.treeSize);
    let problem: string | null = null;
    if (entry === undefined) problem = `entry ${proof.entryId} is not in the export`;
    else if (checkpoint === undefined)
      problem = `no verified checkpoint of tree size ${proof.treeSize} was given`;
    else if (!partial && entry.index !== proof.leafIndex) {
      problem = `entry ${proof.entryId} is entry ${entry.index + 1} of the export, the proof puts it at ${proof.leafIndex + 1}`;
    } else if (
      !verifyInclusion(
        auditLeafHash(entry.hash),
        proof.leafIndex,
        proof.treeSize,
        decode(proof.hashes),
        checkpoint.root,
      )
    ) {
      problem = `it does not show entry ${proof.entryId} in the tree of size ${proof.treeSize}`;
    }
    if (problem !== null || entry === undefined || checkpoint === undefined) {
      findings.push({ code: 'AUDIT_PROOF_INVALID', proof: name, message: `${name}: ${problem}` });
      continue;
    }
    const outcome = outcomes[checkpoint.index] as (typeof outcomes)[number];
    if (outcome.status !== 'matched') outcome.status = 'proven';
    // Through the chain, the entry's hash commits to every entry before it in the export.
    anchoredEntries = Math.max(anchoredEntries, entry.index + 1);
  }

  // 5. Consistency proofs between two checkpoints.
  for (const [index, proof] of consistencyProofs.entries()) {
    if (proven.has(index)) continue;
    const first = bySize.get(proof.first);
    const second = bySize.get(proof.second);
    if (first === undefined || second === undefined) continue;
    if (
      !verifyConsistency(proof.first, proof.second, first.root, second.root, decode(proof.hashes))
    ) {
      findings.push({
        code: 'AUDIT_CHECKPOINTS_INCONSISTENT',
        proof: `consistency[${index}]`,
        checkpoint: sources[second.index]?.source,
        message: `consistency[${index}] does not show ${sources[second.index]?.source} extending ${sources[first.index]?.source}: two histories were shown`,
      });
    }
  }

  for (const outcome of outcomes) {
    if (outcome.status === 'failed' && partial && outcome.treeSize !== null) {
      const failedHere = findings.some((finding) => finding.checkpoint === outcome.source);
      if (!failedHere) outcome.status = 'not-reached';
    }
  }
  return { ok: findings.length === 0, checkpoints: outcomes, anchoredEntries, findings };
}
