// What tools/list answers passing through this process revealed of upstream tool definitions
// before a snapshot did: (tenant, server, tool) → the digest last observed. A changed definition
// must be held from the very next call (docs/tool-pinning.md), not only once the listing was
// written, the configVersion bumped and a rebuilt snapshot applied, so the pass-through recorder
// notes each listed digest here at once and `CompiledServer.toolVerdict` (compile-tenant.ts)
// reads it before the snapshot's pin.
//
// Invariants: one overlay per store, shared by every snapshot it compiles (as the kill overlay);
// an entry only ever holds what the upstream actually listed, and it is dropped once a snapshot
// carries that same observed digest (the snapshot then says the same), or a newer observation
// replaces it. An approval that the snapshot carries settles the entry too: the approved digest
// then equals the observed one. An entry is never needed to un-hold a tool: a revert observed
// here clears the hold at once, as the database will.
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';

/** A server's key in the overlay: `tenantId/serverId` (CompiledServer.serverKey). */
export type PinServerKey = string;

export class PinOverlay {
  /** Server key → tool name → observed digest. */
  readonly #observed = new Map<PinServerKey, Map<string, string>>();
  /** Most servers remembered; the one noted longest ago is forgotten first. */
  readonly #maxServers: number;

  constructor(options: { readonly maxServers?: number } = {}) {
    this.#maxServers = options.maxServers ?? 10_000;
  }

  /** The digest a listing revealed and no snapshot carries yet, if any. */
  observed(serverKey: PinServerKey, toolName: string): string | undefined {
    if (this.#observed.size === 0) return undefined;
    return this.#observed.get(serverKey)?.get(toolName);
  }

  /** Servers with observations no snapshot carries yet. */
  get size(): number {
    return this.#observed.size;
  }

  /**
   * Notes the digests of a listing; `pinned` reads the observed digest the current snapshot
   * carries, so a listing that says what the snapshot says adds nothing.
   */
  note(
    serverKey: PinServerKey,
    digests: Iterable<readonly [toolName: string, digest: string]>,
    pinned: (toolName: string) => string | undefined,
  ): void {
    let tools = this.#observed.get(serverKey);
    for (const [toolName, digest] of digests) {
      if (pinned(toolName) === digest) {
        tools?.delete(toolName);
        continue;
      }
      if (tools === undefined) {
        tools = new Map();
        this.#remember(serverKey, tools);
      }
      tools.set(toolName, digest);
    }
    if (tools?.size === 0) this.#observed.delete(serverKey);
  }

  /** Drops every observation `snapshot` now carries (the same observed digest). */
  settle(snapshot: ConfigSnapshot): void {
    if (this.#observed.size === 0) return;
    for (const tenant of snapshot.tenants) {
      for (const server of tenant.servers) {
        const serverKey = `${tenant.id}/${server.serverId}`;
        const tools = this.#observed.get(serverKey);
        if (tools === undefined) continue;
        for (const [toolName, digest] of tools) {
          if (server.toolPins?.[toolName]?.observed === digest) tools.delete(toolName);
        }
        if (tools.size === 0) this.#observed.delete(serverKey);
      }
    }
  }

  #remember(serverKey: PinServerKey, tools: Map<string, string>): void {
    this.#observed.set(serverKey, tools);
    if (this.#observed.size > this.#maxServers) {
      const oldest = this.#observed.keys().next().value;
      if (oldest !== undefined) this.#observed.delete(oldest);
    }
  }
}
