// Keys derived from the gateway's master key (DESIGN.md §6a), one per purpose: HKDF-SHA256
// (RFC 5869) with an empty salt (the master key is already uniformly random) and the purpose's
// own label as `info`, so a key derived for one use never equals another's and the master key
// itself never signs or MACs anything. Every process holding the master key derives the same key,
// which is what lets one data plane verify what another minted.
import { hkdfSync } from 'node:crypto';

/** The labels in use: one per purpose, versioned so a purpose can move to a new key. */
export const DERIVED_KEY_LABELS = Object.freeze({
  /** The MAC of the gateway's MCP `requestState` envelopes (shared/mcp/request-state.ts). */
  MCP_REQUEST_STATE: 'agent-gateway/mcp-request-state/v1',
} as const);

export type DerivedKeyLabel = (typeof DERIVED_KEY_LABELS)[keyof typeof DERIVED_KEY_LABELS];

/** The 32-byte key for `label` derived from `masterKey`. */
export function deriveKey(masterKey: Uint8Array, label: DerivedKeyLabel): Buffer {
  if (masterKey.length !== 32) {
    throw new RangeError(`a master key has 32 bytes, not ${masterKey.length}`);
  }
  return Buffer.from(hkdfSync('sha256', masterKey, new Uint8Array(0), label, 32));
}
