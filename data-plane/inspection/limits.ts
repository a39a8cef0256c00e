// Bounds on how much of a call's arguments the detectors inspect, and the walker that enforces
// them. Pure module: no I/O, no framework imports.
//
// Arguments are attacker-controlled and may be megabytes. The walker visits leaves depth-first in
// document order, iteratively (an explicit stack, so 10k-deep nesting cannot overflow the call
// stack), own enumerable properties of plain objects and elements of arrays only. When a bound is
// crossed it stops and reports an `inspection-limit` finding: the caller fails closed, because an
// argument that was not inspected cannot be declared harmless. JSON cannot be cyclic, but a
// container that is already on the stack is skipped rather than walked again.
//
// The bounds themselves live in shared/inspection/limits.ts (the control plane masks approval
// arguments within the same ones).

import {
  DEFAULT_INSPECTION_LIMITS,
  type InspectionLimits,
} from '../../shared/inspection/limits.js';
import type { Finding } from './types.js';

export { DEFAULT_INSPECTION_LIMITS, type InspectionLimits };

/** Fills in defaults and validates once, when a detector is compiled (throws on bad options). */
export function resolveInspectionLimits(limits?: Partial<InspectionLimits>): InspectionLimits {
  if (limits === undefined) return DEFAULT_INSPECTION_LIMITS;
  const resolved = { ...DEFAULT_INSPECTION_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new RangeError(`inspection limit ${name} must be a positive integer`);
    }
  }
  return Object.freeze(resolved);
}

/** Receives each leaf; returning a finding stops the walk. */
export interface LeafVisitor {
  visitString(value: string, walker: ArgumentWalker): Finding | null;
  visitNumber(value: number, walker: ArgumentWalker): Finding | null;
  visitBoolean(value: boolean, walker: ArgumentWalker): Finding | null;
}

const LIMIT_DEPTH: Finding = Object.freeze({ kind: 'inspection-limit', detail: 'maxDepth' });
const LIMIT_NODES: Finding = Object.freeze({ kind: 'inspection-limit', detail: 'maxNodes' });
const LIMIT_STRINGS: Finding = Object.freeze({ kind: 'inspection-limit', detail: 'maxStrings' });
const LIMIT_STRING_BYTES: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'maxStringBytes',
});
const LIMIT_TOTAL_BYTES: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'maxTotalBytes',
});
export const LIMIT_CANDIDATES: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'maxCandidates',
});
/** Returned when inspection itself failed (a hostile getter or proxy threw). */
export const INSPECTION_FAILED: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'inspection failed',
});

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_PATH_KEY = 64;

function isWalkable(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * One walker per compiled detector, reused across calls (walks are synchronous and the walker
 * refuses re-entry). Frames live in parallel arrays to avoid an object per container.
 */
export class ArgumentWalker {
  readonly limits: InspectionLimits;
  private readonly containers: object[] = [];
  private readonly keyLists: (string[] | null)[] = [];
  private readonly positions: number[] = [];
  private readonly lengths: number[] = [];
  private depth = 0;
  private busy = false;
  private candidates = 0;
  private foundPath = 'arguments';

  constructor(limits: InspectionLimits) {
    this.limits = limits;
  }

  /** Walks `root`; returns the visitor's finding, a limit finding, or null. */
  walk(root: unknown, visitor: LeafVisitor): Finding | null {
    if (this.busy) return new ArgumentWalker(this.limits).walk(root, visitor);
    this.busy = true;
    try {
      const found = this.run(root, visitor);
      this.foundPath = found === null ? 'arguments' : this.path();
      return found;
    } finally {
      for (let i = 0; i < this.depth; i++) {
        this.containers[i] = Object.prototype; // drop references to the caller's data
        this.keyLists[i] = null;
      }
      this.depth = 0;
      this.busy = false;
    }
  }

  /** The path of the value where the last walk stopped with a finding. */
  lastPath(): string {
    return this.foundPath;
  }

  /** Spends one expensive-candidate unit; false once maxCandidates is exhausted. */
  takeCandidate(): boolean {
    return ++this.candidates <= this.limits.maxCandidates;
  }

  /** The property name holding the current value, or undefined (array element, root). */
  key(): string | undefined {
    const d = this.depth - 1;
    if (d < 0) return undefined;
    const keys = this.keyLists[d];
    return keys === null || keys === undefined ? undefined : keys[this.positions[d]! - 1];
  }

  /** The array index of the current value, or -1. */
  index(): number {
    const d = this.depth - 1;
    if (d < 0 || this.keyLists[d] !== null) return -1;
    return this.positions[d]! - 1;
  }

  /** The container holding the current value (undefined at the root). */
  parent(): unknown {
    return this.depth === 0 ? undefined : this.containers[this.depth - 1];
  }

  /** JSON path of the current value, e.g. `arguments.items[2].sql`. Allocates; call on findings. */
  path(): string {
    let path = 'arguments';
    for (let d = 0; d < this.depth; d++) {
      const keys = this.keyLists[d];
      const position = this.positions[d]! - 1;
      if (keys === null || keys === undefined) {
        path += `[${position}]`;
      } else {
        let key = keys[position] ?? '';
        if (key.length > MAX_PATH_KEY) key = `${key.slice(0, MAX_PATH_KEY)}…`;
        path += IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
      }
    }
    return path;
  }

  private run(root: unknown, visitor: LeafVisitor): Finding | null {
    const limits = this.limits;
    let nodes = 0;
    let strings = 0;
    let total = 0;
    this.candidates = 0;
    let value = root;
    for (;;) {
      if (++nodes > limits.maxNodes) return LIMIT_NODES;
      switch (typeof value) {
        case 'string': {
          if (++strings > limits.maxStrings) return LIMIT_STRINGS;
          const length = value.length;
          if (length > limits.maxStringBytes) return LIMIT_STRING_BYTES;
          total += length;
          if (total > limits.maxTotalBytes) return LIMIT_TOTAL_BYTES;
          const found = visitor.visitString(value, this);
          if (found !== null) return found;
          break;
        }
        case 'number': {
          const found = visitor.visitNumber(value, this);
          if (found !== null) return found;
          break;
        }
        case 'boolean': {
          const found = visitor.visitBoolean(value, this);
          if (found !== null) return found;
          break;
        }
        case 'object':
          if (value !== null && isWalkable(value) && !this.onStack(value)) {
            if (this.depth >= limits.maxDepth) return LIMIT_DEPTH;
            const d = this.depth++;
            this.containers[d] = value;
            if (Array.isArray(value)) {
              this.keyLists[d] = null;
              this.lengths[d] = value.length;
            } else {
              const keys = Object.keys(value);
              this.keyLists[d] = keys;
              this.lengths[d] = keys.length;
            }
            this.positions[d] = 0;
          }
          break;
        default:
          break;
      }
      // Advance to the next value: the next member of the innermost unfinished container.
      for (;;) {
        const d = this.depth - 1;
        if (d < 0) return null;
        const position = this.positions[d]!;
        if (position < this.lengths[d]!) {
          this.positions[d] = position + 1;
          const container = this.containers[d] as Record<string, unknown>;
          const keys = this.keyLists[d];
          value =
            keys === null
              ? (container as unknown as unknown[])[position]
              : container[keys![position]!];
          break;
        }
        this.containers[d] = Object.prototype;
        this.keyLists[d] = null;
        this.depth = d;
      }
    }
  }

  private onStack(value: object): boolean {
    for (let d = 0; d < this.depth; d++) if (this.containers[d] === value) return true;
    return false;
  }
}
