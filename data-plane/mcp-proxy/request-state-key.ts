// The key of the gateway's requestState envelopes (shared/mcp/request-state.ts), derived from the
// master key. Every process that serves the MCP proxy holds it once it knows the master key: the
// single process and a control plane get it when the master key is opened at start, a data plane
// from AGENT_GATEWAY_MASTER_KEY (or its data directory's key file), so a client's retry verifies
// on whichever data plane it lands. Without it the proxy mints no envelope: a held call's
// InputRequiredResult then carries no requestState (the retry resumes the approval by the call's
// digest, as a session-era retry does), and an envelope a client sends is refused.
import { DERIVED_KEY_LABELS, deriveKey } from '../../shared/crypto/derived-key.js';

export class RequestStateKey {
  #key: Buffer | undefined;

  /** Derives the key from the process's master key (32 bytes). */
  useMasterKey(masterKey: Uint8Array): void {
    this.#key = deriveKey(masterKey, DERIVED_KEY_LABELS.MCP_REQUEST_STATE);
  }

  get current(): Buffer | undefined {
    return this.#key;
  }
}
