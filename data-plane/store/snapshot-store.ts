// Holds the data plane's current compiled snapshot and swaps it atomically: a request reads
// `store.current` once and works on that immutable object to the end, whatever arrives meanwhile.
// Rules for the whole snapshot: an older or equal version is ignored, so republishing is
// harmless; a snapshot that cannot be read at all is rejected and the last good one keeps serving
// (the NACK of the Envoy model). Inside a newer snapshot, tenants are rejected one by one: a
// rejected tenant keeps its last good state while the others advance, and the result names the
// rejected tenants and why, for the caller to log and count.
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import {
  type CompiledSnapshot,
  compileSnapshot,
  type TenantRejection,
} from './compiled-snapshot.js';

export type SnapshotApplyResult =
  | {
      readonly applied: true;
      readonly version: number;
      readonly compileMs: number;
      /** Tenants held at their last good state (or left out); empty when all advanced. */
      readonly rejectedTenants: readonly TenantRejection[];
      /** The configuration now served (what a data plane persists): see CompiledSnapshot. */
      readonly served: ConfigSnapshot;
    }
  | { readonly applied: false; readonly version: number; readonly reason: string };

export class SnapshotStore {
  #current: CompiledSnapshot | undefined;
  readonly #listeners = new Set<(snapshot: CompiledSnapshot) => void>();

  get current(): CompiledSnapshot | undefined {
    return this.#current;
  }

  apply(config: ConfigSnapshot): SnapshotApplyResult {
    const previous = this.#current;
    if (previous && config.version <= previous.version) {
      return { applied: false, version: config.version, reason: 'not newer than the current one' };
    }
    const started = performance.now();
    let compiled: CompiledSnapshot;
    try {
      compiled = compileSnapshot(config, previous);
    } catch (error) {
      return { applied: false, version: config.version, reason: (error as Error).message };
    }
    this.#current = compiled;
    for (const listener of this.#listeners) listener(compiled);
    return {
      applied: true,
      version: compiled.version,
      compileMs: performance.now() - started,
      rejectedTenants: compiled.rejectedTenants,
      served: compiled.served,
    };
  }

  onApply(listener: (snapshot: CompiledSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
