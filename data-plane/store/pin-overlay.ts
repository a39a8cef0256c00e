// What tools/list answers passing through this process revealed of upstream tool definitions
// before a snapshot did: (tenant, server, tool) → the digest last observed. A changed definition
// must be held from the very next call (docs/tool-pinning.md), not only once the listing was
// written, the configVersion bumped and a rebuilt snapshot applied, so the pass-through recorder
// notes each listed digest here at once and `CompiledServer.toolVerdict` (compile-tenant.ts)
// reads it before the snapshot's pin.
//
// Invariants: one overlay per store, shared by every snapshot it compiles (as the kill overlay).
// An entry holds what the upstream actually listed, with the pin the snapshot showed when it was
// noted; it is dropped by the first snapshot whose pin for the tool differs from that one (the
// database has moved on: it recorded this observation, a newer one, or an approval, and the
// snapshot now says more than the overlay) or by a newer observation. A revert observed here
// clears the hold at once, as the database will.
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import type { ToolPinDigests } from '../../shared/tools/tool-pins.js';

interface Observation {
  readonly digest: string;
  /** The snapshot's pin when the digest was noted (undefined: none). */
  readonly pinned: ToolPinDigests | undefined;
}

/** A server's key in the overlay: `tenantId/serverId` (CompiledServer.serverKey). */
export type PinServerKey = string;

export class PinOverlay {
  /** Server key → tool name → what was observed. */
  readonly #observed = new Map<PinServerKey, Map<string, Observation>>();
  /** Most servers remembered; the one noted longest ago is forgotten first. */
  readonly #maxServers: number;

  constructor(options: { readonly maxServers?: number } = {}) {
    this.#maxServers = options.maxServers ?? 10_000;
  }

  /** The digest a listing revealed and no snapshot carries yet, if any. */
  observed(serverKey: PinServerKey, toolName: string): string | undefined {
    if (this.#observed.size === 0) return undefined;
    return this.#observed.get(serverKey)?.get(toolName)?.digest;
  }

  /** Servers with observations no snapshot carries yet. */
  get size(): number {
    return this.#observed.size;
  }

  /**
   * Notes the digests of a listing; `pinned` reads the pin the current snapshot carries, so a
   * listing that says what the snapshot says adds nothing.
   */
  note(
    serverKey: PinServerKey,
    digests: Iterable<readonly [toolName: string, digest: string]>,
    pinned: (toolName: string) => ToolPinDigests | undefined,
  ): void {
    let tools = this.#observed.get(serverKey);
    for (const [toolName, digest] of digests) {
      const pin = pinned(toolName);
      if (pin?.observed === digest) {
        tools?.delete(toolName);
        continue;
      }
      if (tools === undefined) {
        tools = new Map();
        this.#remember(serverKey, tools);
      }
      tools.set(toolName, { digest, pinned: pin });
    }
    if (tools?.size === 0) this.#observed.delete(serverKey);
  }

  /** Drops every observation `snapshot` knows better: its pin changed since it was noted. */
  settle(snapshot: ConfigSnapshot): void {
    if (this.#observed.size === 0) return;
    for (const tenant of snapshot.tenants) {
      for (const server of tenant.servers) {
        const serverKey = `${tenant.id}/${server.serverId}`;
        const tools = this.#observed.get(serverKey);
        if (tools === undefined) continue;
        for (const [toolName, observation] of tools) {
          const pin = server.toolPins?.[toolName];
          if (
            pin?.observed !== observation.pinned?.observed ||
            pin?.approved !== observation.pinned?.approved
          ) {
            tools.delete(toolName);
          }
        }
        if (tools.size === 0) this.#observed.delete(serverKey);
      }
    }
  }

  #remember(serverKey: PinServerKey, tools: Map<string, Observation>): void {
    this.#observed.set(serverKey, tools);
    if (this.#observed.size > this.#maxServers) {
      const oldest = this.#observed.keys().next().value;
      if (oldest !== undefined) this.#observed.delete(oldest);
    }
  }
}
