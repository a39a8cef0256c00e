import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProofRanges,
  EMPTY_TREE_ROOT,
  type HashedNode,
  inclusionProofRanges,
  leafHash,
  MerkleFrontier,
  nodesOfRanges,
  rangeNodes,
  verifyConsistency,
  verifyInclusion,
} from '../../../shared/tlog/index.js';

// RFC 6962's test leaves and the roots of their first 1..8 (the Certificate Transparency
// reference vectors, which Go's x/mod/sumdb/tlog also reproduces: tests/interop/go-tlog.test.ts).
const LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
];
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

/** Every node a tree of `count` leaves stores, by "level/index", and the frontier's roots. */
function buildTree(count: number) {
  const frontier = new MerkleFrontier();
  const stored = new Map<string, Uint8Array>();
  const roots: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const leaf = leafHash(Buffer.from(`entry ${i}`));
    for (const node of frontier.append(leaf)) stored.set(`${node.level}/${node.index}`, node.hash);
    roots.push(frontier.root());
  }
  const read = (node: { level: number; index: number }) => {
    const hash = stored.get(`${node.level}/${node.index}`);
    if (hash === undefined) throw new Error(`node ${node.level}/${node.index} was not stored`);
    return hash;
  };
  return { stored, roots, read, frontier };
}

function proofOf(
  ranges: ReturnType<typeof inclusionProofRanges>,
  read: (n: HashedNode | { level: number; index: number }) => Uint8Array,
) {
  return nodesOfRanges(ranges).fold(read);
}

describe('Merkle tree (RFC 9162 hashing)', () => {
  it('reproduces the RFC 6962 reference roots', () => {
    const frontier = new MerkleFrontier();
    LEAVES.forEach((leaf, i) => {
      frontier.append(leafHash(Buffer.from(leaf, 'hex')));
      expect(Buffer.from(frontier.root()).toString('hex')).toBe(ROOTS[i]);
    });
    expect(Buffer.from(new MerkleFrontier().root()).toString('hex')).toBe(
      Buffer.from(EMPTY_TREE_ROOT).toString('hex'),
    );
  });

  it('computes the root of any size from stored nodes only', () => {
    const { roots, read } = buildTree(70);
    for (let size = 1; size <= 70; size++) {
      const [root] = nodesOfRanges([{ start: 0, end: size }]).fold(read);
      expect(root).toEqual(roots[size - 1]);
    }
  });

  it('resumes from a stored right edge exactly as if it had never stopped', () => {
    const whole = buildTree(45);
    for (const stop of [1, 2, 3, 8, 13, 32, 44]) {
      const edge = rangeNodes({ start: 0, end: stop }).map((node) => ({
        ...node,
        hash: whole.read(node),
      }));
      const resumed = new MerkleFrontier(stop, edge);
      for (let i = stop; i < 45; i++) {
        for (const node of resumed.append(leafHash(Buffer.from(`entry ${i}`)))) {
          expect(node.hash).toEqual(whole.read(node));
        }
      }
      expect(resumed.root()).toEqual(whole.roots[44]);
    }
    expect(() => new MerkleFrontier(5, [])).toThrow(RangeError);
  });

  it('proves and verifies the inclusion of every leaf in every tree size', () => {
    const { roots, read } = buildTree(33);
    for (let size = 1; size <= 33; size++) {
      for (let index = 0; index < size; index++) {
        const proof = proofOf(inclusionProofRanges(index, size), read);
        const leaf = read({ level: 0, index });
        const root = roots[size - 1] as Uint8Array;
        expect(verifyInclusion(leaf, index, size, proof, root)).toBe(true);
        // Another leaf, index, size or root does not verify.
        expect(verifyInclusion(leafHash(Buffer.from('other')), index, size, proof, root)).toBe(
          false,
        );
        if (size > 1) {
          expect(verifyInclusion(leaf, (index + 1) % size, size, proof, root)).toBe(false);
        }
        expect(verifyInclusion(leaf, size, size, proof, root)).toBe(false);
      }
    }
  });

  it('proves and verifies consistency between every pair of sizes', () => {
    const { roots, read } = buildTree(33);
    for (let second = 1; second <= 33; second++) {
      for (let first = 1; first <= second; first++) {
        const proof = proofOf(consistencyProofRanges(first, second), read);
        const a = roots[first - 1] as Uint8Array;
        const b = roots[second - 1] as Uint8Array;
        expect(verifyConsistency(first, second, a, b, proof)).toBe(true);
        if (first < second) {
          // A rewritten first tree (another root) or a truncated proof does not verify.
          expect(verifyConsistency(first, second, leafHash(Buffer.from('x')), b, proof)).toBe(
            false,
          );
          expect(verifyConsistency(first, second, a, b, proof.slice(1))).toBe(false);
        }
      }
    }
    expect(() => consistencyProofRanges(0, 3)).toThrow(RangeError);
    expect(() => consistencyProofRanges(4, 3)).toThrow(RangeError);
    expect(() => inclusionProofRanges(3, 3)).toThrow(RangeError);
  });

  it('never verifies a proof with a flipped bit (property)', () => {
    const { roots, read } = buildTree(64);
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 64 }),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 255 }),
        (size, at, which, bit) => {
          const index = at % size;
          const proof = proofOf(inclusionProofRanges(index, size), read);
          const hash = proof[which % proof.length] as Uint8Array;
          const flipped = Uint8Array.from(hash);
          flipped[bit % 32] = (flipped[bit % 32] as number) ^ (1 << (bit % 8));
          const tampered = proof.map((h) => (h === hash ? flipped : h));
          const root = roots[size - 1] as Uint8Array;
          return !verifyInclusion(read({ level: 0, index }), index, size, tampered, root);
        },
      ),
    );
  });

  it('reads each proof from at most a few dozen stored nodes, whatever the size', () => {
    const size = 1_000_000;
    const inclusion = nodesOfRanges(inclusionProofRanges(123_456, size));
    const consistency = nodesOfRanges(consistencyProofRanges(654_321, size));
    expect(inclusion.nodes.length).toBeLessThanOrEqual(40);
    expect(consistency.nodes.length).toBeLessThanOrEqual(40);
  });
});
