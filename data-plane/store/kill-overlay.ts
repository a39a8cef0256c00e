// What kill deltas (shared/config-stream/protocol.ts AgentKillDelta) told this store before a full
// snapshot did: the agents killed and the status lists re-signed with their credentials' bits set
// (by a kill, or by a credential revocation heard on the event bus: data-plane/remote/
// revocation-follower.ts).
// A kill must take effect in milliseconds, without a rebuilt snapshot (DESIGN.md §3, §7), so the
// store keeps these beside its compiled snapshots and every reader consults them:
// `CompiledAgent.killed` (compile-tenant.ts) and the status-list lookups (identity verifier,
// GET status-lists/:id).
//
// Invariants: the overlay only ever makes things stricter. A full snapshot built before the kill
// (it shows the agent active and the lists at older versions) never un-kills: an agent stays
// killed until a snapshot shows it killed (or says it includes the kill: killsThrough ≥ seq), and
// only then is its entry dropped; an overlaid list wins while its version is higher than the
// snapshot's, and is dropped once the snapshot carries that version or a newer one. One overlay
// per store, shared by every snapshot it compiles, so a request still holding an older snapshot
// sees a kill too.
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import type { CompiledStatusList, KillMarks } from './compiled-types.js';

export class KillOverlay implements KillMarks {
  /** agent id → the kill's seq. */
  readonly #agents = new Map<string, number>();
  /** Status lists by URL (what credentials name) and by StatusList id (what the route serves). */
  readonly #listsByUrl = new Map<string, CompiledStatusList>();
  readonly #listsById = new Map<string, CompiledStatusList>();

  /** Whether a kill delta named the agent and no snapshot has shown it killed since. */
  isKilled(agentId: string): boolean {
    return this.#agents.size !== 0 && this.#agents.has(agentId);
  }

  /** Agents killed by a delta, not yet shown killed by a snapshot. */
  get pendingAgents(): number {
    return this.#agents.size;
  }

  /** The newer of a snapshot's list (by URL) and the overlaid one. */
  statusListByUrl(
    url: string,
    fromSnapshot: CompiledStatusList | undefined,
  ): CompiledStatusList | undefined {
    if (this.#listsByUrl.size === 0) return fromSnapshot;
    return newer(fromSnapshot, this.#listsByUrl.get(url));
  }

  /** The newer of a snapshot's list (by StatusList id) and the overlaid one. */
  statusListById(
    id: string,
    fromSnapshot: CompiledStatusList | undefined,
  ): CompiledStatusList | undefined {
    if (this.#listsById.size === 0) return fromSnapshot;
    return newer(fromSnapshot, this.#listsById.get(id));
  }

  /**
   * Records a kill: the agent, and each list newer than what is known. True when anything
   * changed (a repeated delta changes nothing).
   */
  mark(
    agentId: string,
    seq: number,
    lists: readonly CompiledStatusList[],
    current: {
      isKilled(agentId: string): boolean;
      list(url: string): CompiledStatusList | undefined;
    },
  ): boolean {
    let changed = false;
    if (!this.#agents.has(agentId) && !current.isKilled(agentId)) {
      this.#agents.set(agentId, seq);
      changed = true;
    }
    return this.markLists(lists, current.list) || changed;
  }

  /**
   * Records status lists newer than what is known (a credential revoked outside a kill): each
   * wins over the snapshot's until a snapshot carries its version. True when any was newer.
   */
  markLists(
    lists: readonly CompiledStatusList[],
    fromSnapshot: (url: string) => CompiledStatusList | undefined,
  ): boolean {
    let changed = false;
    for (const list of lists) {
      const known = this.statusListByUrl(list.url, fromSnapshot(list.url));
      if (known !== undefined && known.version >= list.version) continue;
      this.#listsByUrl.set(list.url, list);
      this.#listsById.set(list.id, list);
      changed = true;
    }
    return changed;
  }

  /**
   * Drops what `snapshot` now carries: agents it shows killed (or whose kill it includes), lists
   * it has at the same version or newer.
   */
  settle(snapshot: ConfigSnapshot, listOf: (url: string) => CompiledStatusList | undefined): void {
    if (this.#agents.size > 0) {
      const killsThrough = snapshot.killsThrough ?? 0;
      const killedInSnapshot = new Set<string>();
      for (const tenant of snapshot.tenants) {
        for (const agent of tenant.agents) {
          if (agent.status !== 'active' && this.#agents.has(agent.id)) {
            killedInSnapshot.add(agent.id);
          }
        }
      }
      for (const [agentId, seq] of this.#agents) {
        if (killedInSnapshot.has(agentId) || seq <= killsThrough) this.#agents.delete(agentId);
      }
    }
    for (const [url, list] of this.#listsByUrl) {
      const carried = listOf(url);
      if (carried !== undefined && carried.version >= list.version) {
        this.#listsByUrl.delete(url);
        this.#listsById.delete(list.id);
      }
    }
  }
}

function newer(
  a: CompiledStatusList | undefined,
  b: CompiledStatusList | undefined,
): CompiledStatusList | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.version > a.version ? b : a;
}
