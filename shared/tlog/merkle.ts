// Merkle trees hashed as RFC 9162 §2.1 says: a leaf is SHA-256(0x00 ‖ data), a node
// SHA-256(0x01 ‖ left ‖ right). The audit trail builds one per tenant (shared/audit/tree.ts).
//
// Proofs are computed from complete subtrees ("nodes": 2^level leaves from index · 2^level), which
// never change once their last leaf exists, so a store can keep them (storage/tables/audit-tree.ts
// keeps some levels and folds the others). Every range a proof names is aligned, so its hash folds
// from at most log2(n) nodes: proofs are read, never recomputed from the trail. The
// proof functions return the nodes to read and how to fold them; the verifiers are RFC 9162
// §2.1.3.2 and §2.1.4.2 step by step. Pure; hand-written because no maintained npm package
// implements RFC 9162 proofs over caller-stored nodes (the ones that exist rebuild the whole tree
// in memory), and the algorithms are a page of the RFC.
//
// Indexes stay JavaScript numbers (exact to 2^53) and never meet 32-bit bitwise operators.
import { hash } from 'node:crypto';

export const HASH_BYTES = 32;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;
/** One node's input, reused: hashing is synchronous (one-shot `hash` is twice createHash's speed). */
const NODE_INPUT = Buffer.alloc(1 + 2 * HASH_BYTES);

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_TREE_ROOT: Uint8Array = hash('sha256', Buffer.alloc(0), 'buffer');

export function leafHash(data: Uint8Array): Uint8Array {
  const input = Buffer.allocUnsafe(1 + data.length);
  input[0] = LEAF_PREFIX;
  input.set(data, 1);
  return hash('sha256', input, 'buffer');
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== HASH_BYTES || right.length !== HASH_BYTES) {
    throw new RangeError('a Merkle node joins two 32-byte hashes');
  }
  NODE_INPUT[0] = NODE_PREFIX;
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + HASH_BYTES);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** A complete subtree: the 2^level leaves from index · 2^level. */
export interface TreeNode {
  readonly level: number;
  readonly index: number;
}

/** Leaves [start, end): a range whose hash is RFC 9162's MTH of those leaves. */
export interface LeafRange {
  readonly start: number;
  readonly end: number;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.floor(Math.log2(n)) === n;
}

/** The largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function checkSize(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative safe integer, not ${value}`);
  }
}

/**
 * The complete subtrees that make up leaves [start, end), left to right, each as large as its
 * position allows. For a range RFC 9162 splits (an aligned start), folding their hashes from the
 * right (foldNodes) gives the range's MTH.
 */
export function rangeNodes(range: LeafRange): TreeNode[] {
  const nodes: TreeNode[] = [];
  let at = range.start;
  while (at < range.end) {
    let level = 0;
    while (at % 2 ** (level + 1) === 0 && at + 2 ** (level + 1) <= range.end) level++;
    nodes.push({ level, index: at / 2 ** level });
    at += 2 ** level;
  }
  return nodes;
}

/** MTH of a range from the hashes of its rangeNodes, in the same order. */
export function foldNodes(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return EMPTY_TREE_ROOT;
  let hash = hashes[hashes.length - 1] as Uint8Array;
  for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i] as Uint8Array, hash);
  return hash;
}

/** The ranges whose hashes make the inclusion proof of leaf `index` in the tree of `size` (RFC 9162 §2.1.3.1), in proof order. */
export function inclusionProofRanges(index: number, size: number): LeafRange[] {
  checkSize('index', index);
  checkSize('size', size);
  if (index >= size) throw new RangeError(`leaf ${index} is not in a tree of size ${size}`);
  const path: LeafRange[] = [];
  let start = 0;
  let end = size;
  // PATH(m, D[start:end]) walks down to the leaf; the siblings are listed leaf first.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index - start < k) {
      path.push({ start: start + k, end });
      end = start + k;
    } else {
      path.push({ start, end: start + k });
      start += k;
    }
  }
  return path.reverse();
}

/** The ranges of the consistency proof from tree size `first` to `second` (RFC 9162 §2.1.4.1), in proof order. */
export function consistencyProofRanges(first: number, second: number): LeafRange[] {
  checkSize('first', first);
  checkSize('second', second);
  if (first < 1 || first > second) {
    throw new RangeError(`a consistency proof needs 1 ≤ first ≤ second, not ${first}, ${second}`);
  }
  const proof: LeafRange[] = [];
  let start = 0;
  let end = second;
  let m = first;
  let whole = true;
  // SUBPROOF(m, D[start:end], whole), iteratively; each step adds the sibling it did not enter.
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push({ start: start + k, end });
      end = start + k;
    } else {
      proof.push({ start, end: start + k });
      start += k;
      m -= k;
      whole = false;
    }
  }
  if (!whole) proof.push({ start, end });
  return proof.reverse();
}

/** Every stored node the ranges need, without repeats, and how each range reads them. */
export function nodesOfRanges(ranges: readonly LeafRange[]): {
  readonly nodes: TreeNode[];
  readonly fold: (hashOf: (node: TreeNode) => Uint8Array) => Uint8Array[];
} {
  const perRange = ranges.map(rangeNodes);
  const seen = new Map<string, TreeNode>();
  for (const nodes of perRange) {
    for (const node of nodes) seen.set(`${node.level}/${node.index}`, node);
  }
  return {
    nodes: [...seen.values()],
    fold: (hashOf) => perRange.map((nodes) => foldNodes(nodes.map(hashOf))),
  };
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** RFC 9162 §2.1.3.2: whether `proof` shows the leaf `leaf` at `index` in the tree of `size` with `root`. */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0) return false;
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(r, root);
}

/** RFC 9162 §2.1.4.2: whether `proof` shows the tree of `second` with `secondRoot` extends the tree of `first` with `firstRoot`. */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second)) return false;
  if (first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && same(firstRoot, secondRoot);
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return same(fr, firstRoot) && same(sr, secondRoot) && sn === 0;
}

/** A stored node and its hash. */
export interface HashedNode extends TreeNode {
  readonly hash: Uint8Array;
}

/**
 * A tree growing one leaf at a time, holding only its right edge (the complete subtrees of its
 * size, at most log2(n) + 1 of them). Each `append` returns the nodes its leaf completed, leaf
 * first: what the tree builder stores, and how the verifier computes the root of an export's
 * first n entries in one pass.
 */
export class MerkleFrontier {
  #size: number;
  /** The complete subtrees of the tree, largest (leftmost) first. */
  #edge: HashedNode[];

  /** Continues a tree of `size` leaves whose rangeNodes({0, size}) hashes are `edge`. */
  constructor(size = 0, edge: readonly HashedNode[] = []) {
    checkSize('size', size);
    const expected = rangeNodes({ start: 0, end: size });
    if (
      expected.length !== edge.length ||
      expected.some((node, i) => node.level !== edge[i]?.level || node.index !== edge[i]?.index)
    ) {
      throw new RangeError(`the right edge of a tree of size ${size} is not the one given`);
    }
    this.#size = size;
    this.#edge = [...edge];
  }

  get size(): number {
    return this.#size;
  }

  /** The complete subtrees of the current tree, largest first (what the constructor takes). */
  get edge(): readonly HashedNode[] {
    return this.#edge;
  }

  append(leaf: Uint8Array): HashedNode[] {
    const made: HashedNode[] = [{ level: 0, index: this.#size, hash: leaf }];
    let node = made[0] as HashedNode;
    this.#size++;
    // Merge while the last complete subtree has a left sibling of its own size.
    for (;;) {
      const last = this.#edge[this.#edge.length - 1];
      if (last === undefined || last.level !== node.level) break;
      this.#edge.pop();
      node = { level: node.level + 1, index: last.index / 2, hash: nodeHash(last.hash, node.hash) };
      made.push(node);
    }
    this.#edge.push(node);
    return made;
  }

  root(): Uint8Array {
    return foldNodes(this.#edge.map((node) => node.hash));
  }
}
