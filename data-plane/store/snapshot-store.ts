// Holds the data plane's current compiled snapshot and swaps it atomically: a request reads
// `store.current` once and works on that immutable object to the end, whatever arrives meanwhile.
// Rules for the whole snapshot: an older or equal version is ignored, so republishing is
// harmless; a snapshot that cannot be read at all is rejected and the last good one keeps serving
// (the NACK of the Envoy model). Inside a newer snapshot, tenants are rejected one by one: a
// rejected tenant keeps its last good state while the others advance, and the result names the
// rejected tenants and why, for the caller to log and count.
//
// Kill deltas (`applyKill`) do not make a new snapshot: they go into the store's kill overlay
// (kill-overlay.ts), which every compiled snapshot of this store consults, and which survives
// later full snapshots until they include the kill. So a snapshot built before a kill, applied
// after it, never un-kills the agent.
//
// Tool definitions a tools/list passing through this process revealed (`notePinObservations`) go
// into the store's pin overlay (pin-overlay.ts) the same way: a changed tool is held from the
// next call on, before the snapshot recording the change arrives.
import { tenantDid } from '../../shared/agentiam/dids.js';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import type { ConfigSnapshot, StatusListConfig } from '../../shared/snapshot/index.js';
import { type ListedTool, toolDefinitionDigest } from '../../shared/tools/tool-definitions.js';
import { compileStatusList } from './compile-identity.js';
import {
  type CompiledSnapshot,
  type CompiledStatusList,
  compileSnapshot,
  type TenantRejection,
} from './compiled-snapshot.js';
import { KillOverlay } from './kill-overlay.js';
import { PinOverlay } from './pin-overlay.js';

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
  readonly #kills = new KillOverlay();
  readonly #pins = new PinOverlay();

  get current(): CompiledSnapshot | undefined {
    return this.#current;
  }

  /** The kill deltas this store holds beyond its snapshot (shared by all its snapshots). */
  get kills(): KillOverlay {
    return this.#kills;
  }

  /** Tool digests listings revealed beyond the snapshot (shared by all its snapshots). */
  get pins(): PinOverlay {
    return this.#pins;
  }

  /**
   * Notes the definitions of tools a tools/list of `source` (from `url`, when given) just
   * answered: a tool whose digest
   * differs from its pin is held from now on (CompiledServer.toolVerdict), a revert clears the
   * hold, before the database and the next snapshot say so.
   */
  notePinObservations(
    source: { readonly tenantId: string; readonly serverId: string; readonly url?: string },
    tools: readonly ListedTool[],
  ): void {
    const server = this.#current?.tenants.get(source.tenantId)?.servers.get(source.serverId);
    // An answer of a URL the server no longer points at says nothing about its tools now.
    if (server !== undefined && source.url !== undefined && server.url !== source.url) return;
    this.#pins.note(
      `${source.tenantId}/${source.serverId}`,
      tools.map((tool) => [tool.name, toolDefinitionDigest(tool.definition)] as const),
      (toolName) => server?.toolPins.get(toolName),
    );
  }

  /**
   * Applies a kill delta at once: the agent reads killed in every snapshot of this store, and
   * each of the delta's status lists newer than the one served replaces it. True when anything
   * changed; a repeated delta, or one the snapshot already shows, answers false.
   */
  applyKill(delta: AgentKillDelta): boolean {
    const lists: CompiledStatusList[] = [];
    for (const list of delta.statusLists) {
      // The tenant's own lists only: a delta cannot replace another tenant's list.
      if (!belongsToTenant(list.credential, delta.tenantId)) continue;
      const compiled = compileStatusList(list, undefined);
      if (compiled) lists.push(compiled);
    }
    const current = this.#current;
    const tenant = current?.tenants.get(delta.tenantId);
    return this.#kills.mark(delta.agentId, delta.seq, lists, {
      isKilled: (agentId) => tenant?.agents.get(agentId)?.killed ?? false,
      list: (url) => tenant?.identity.statusLists.get(url),
    });
  }

  /**
   * Applies re-signed status lists of a tenant at once (a credential revoked outside a kill): each
   * newer than the one served replaces it until a snapshot carries it. True when any was newer.
   */
  applyStatusLists(tenantId: string, statusLists: readonly StatusListConfig[]): boolean {
    const lists: CompiledStatusList[] = [];
    for (const list of statusLists) {
      if (!belongsToTenant(list.credential, tenantId)) continue;
      const compiled = compileStatusList(list, undefined);
      if (compiled) lists.push(compiled);
    }
    const tenant = this.#current?.tenants.get(tenantId);
    return this.#kills.markLists(lists, (url) => tenant?.identity.statusLists.get(url));
  }

  /** A status list by StatusList id, as served: the snapshot's, or a newer one from a kill. */
  statusListById(id: string): CompiledStatusList | undefined {
    return this.#kills.statusListById(id, this.#current?.statusListsById.get(id));
  }

  apply(config: ConfigSnapshot): SnapshotApplyResult {
    const previous = this.#current;
    if (previous && config.version <= previous.version) {
      return { applied: false, version: config.version, reason: 'not newer than the current one' };
    }
    const started = performance.now();
    let compiled: CompiledSnapshot;
    try {
      compiled = compileSnapshot(config, previous, this.#kills, this.#pins);
    } catch (error) {
      return { applied: false, version: config.version, reason: (error as Error).message };
    }
    const listsByUrl = new Map<string, CompiledStatusList>();
    for (const tenant of compiled.tenants.values()) {
      for (const [url, list] of tenant.identity.statusLists) listsByUrl.set(url, list);
    }
    this.#kills.settle(compiled.served, (url) => listsByUrl.get(url));
    this.#pins.settle(compiled.served);
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

/** Whether a signed status-list credential is issued by the tenant's CA (did:svc:<tenantId>). */
function belongsToTenant(credential: Readonly<Record<string, unknown>>, tenantId: string): boolean {
  const issuer = credential.issuer;
  const id = typeof issuer === 'string' ? issuer : (issuer as { id?: unknown } | undefined)?.id;
  return id === tenantDid(tenantId);
}
