// Custody of the tenant CA keys' private halves: they exist in clear only in this process's
// memory, for the moment a credential or a status list is signed. At rest they are sealed with
// AES-256-GCM under the gateway's master key (shared/crypto/seal.ts), bound to `<tenantId>/<kid>`
// so a sealed key copied to another row does not open. The composition hands the master key over
// once it is loaded and checked against the sealed keys in the database (runtime/master-key.ts);
// until then, and in a process that never gets one, signing answers SIGNING_KEY_UNAVAILABLE.

import { seal, unseal } from '../../../shared/crypto/seal.js';
import { gatewayError } from '../../../shared/errors/index.js';

export class KeyCustody {
  #masterKey: Buffer | undefined;
  #source = '';

  /** Takes the master key (32 bytes) and where it came from, for error messages. */
  useMasterKey(masterKey: Buffer, source: string): void {
    this.#masterKey = masterKey;
    this.#source = source;
  }

  /** Whether a master key was handed over: signing is possible. */
  get ready(): boolean {
    return this.#masterKey !== undefined;
  }

  /** Where the master key came from: the environment variable or the key file's path. */
  get source(): string {
    return this.#source;
  }

  /** The sealed form of a CA key's 32-byte seed, as TenantSigningKey.privateKeySealed stores it. */
  seal(tenantId: string, kid: string, seed: Uint8Array): string {
    return seal(this.#requireMasterKey(), seed, aadOf(tenantId, kid));
  }

  /**
   * The seed of a sealed CA key. SIGNING_KEY_UNAVAILABLE when this process has no master key or
   * the master key does not open it (a process with the wrong key refuses to start; this is
   * for a key sealed by another process after this one started).
   */
  unseal(tenantId: string, kid: string, sealed: string): Uint8Array {
    const masterKey = this.#requireMasterKey();
    try {
      return unseal(masterKey, sealed, aadOf(tenantId, kid));
    } catch (error) {
      throw gatewayError(
        'SIGNING_KEY_UNAVAILABLE',
        { reason: `the master key from ${this.#source} cannot open signing key ${kid}` },
        { cause: error },
      );
    }
  }

  #requireMasterKey(): Buffer {
    if (this.#masterKey === undefined) {
      throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
        reason: 'this process has no master key',
      });
    }
    return this.#masterKey;
  }
}

/** The additional authenticated data of a sealed CA key (the contract's `<tenantId>/<kid>`). */
export function aadOf(tenantId: string, kid: string): string {
  return `${tenantId}/${kid}`;
}
