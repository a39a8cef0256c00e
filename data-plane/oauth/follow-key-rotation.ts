// Lets a running process follow `agent-gateway token-key rotate` without a restart. The command
// publishes the new key's public half, writes the private key to the process's key file, then
// marks the old key retired; the snapshot that carries the retirement reaches this process like
// any configuration change (a second on a shared database). When that snapshot says the key this
// process signs with is retired, the process reads its key file again and signs every later token
// with the key it finds there, provided the snapshot already publishes it (so no data plane sees
// a token whose kid it does not know). Tokens signed before keep verifying: the retired key stays
// in every JWKS until the last of them has expired (shared/oauth/token-lifetimes.ts).
import type { Logger } from 'pino';
import type { TokenSigningKeyConfig } from '../../shared/snapshot/index.js';
import type { CompiledSnapshot } from '../store/compiled-types.js';
import type { TokenSigner, TokenSigningKeyMaterial } from './token-signer.js';

export interface FollowKeyRotationOptions {
  readonly signer: TokenSigner;
  readonly store: { onApply(listener: (snapshot: CompiledSnapshot) => void): () => void };
  /** Reads the process's key file (runtime/token-signing-key.ts). */
  readonly reload: () => Promise<TokenSigningKeyMaterial>;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

/** Switches `signer` to the key file's key whenever a snapshot retires the key it signs with. */
export function followKeyRotation(options: FollowKeyRotationOptions): void {
  const { signer, logger } = options;
  let switching = false;
  let warnedKid: string | null = null;
  options.store.onApply((snapshot) => {
    const keys = snapshot.served.tokenSigningKeys ?? [];
    const own = keys.find((key) => key.kid === signer.kid);
    if (own?.retiredAt === undefined || switching) return;
    switching = true;
    void switchKey(keys)
      .catch((error: unknown) => {
        logger.warn({ err: error, kid: signer.kid }, 'token signing key file unreadable');
      })
      .finally(() => {
        switching = false;
      });
  });

  async function switchKey(keys: readonly TokenSigningKeyConfig[]): Promise<void> {
    const next = await options.reload();
    const previousKid = signer.kid;
    const published = keys.some((key) => key.kid === next.kid && key.retiredAt === undefined);
    if (next.kid === previousKid || !published) {
      if (warnedKid === previousKid) return;
      warnedKid = previousKid;
      logger.warn(
        { kid: previousKid, fileKid: next.kid },
        'token signing key retired, but the key file holds no newer published key: still signing with the retired key',
      );
      return;
    }
    await signer.switchTo(next);
    logger.info({ previousKid, kid: next.kid }, 'token signing key rotated');
  }
}
