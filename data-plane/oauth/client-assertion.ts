// RFC 7523 client assertions (private_key_jwt), verified one way for every kind of client: a
// registered client's (signed by its agent's key, client-auth.ts) and a client ID metadata
// document client's (signed by a key of its document, metadata-document-auth.ts). jose verifies
// the signature, iss = sub = the client id, an audience of this server's, exp and jti; the
// assertion may not live more than MAX_ASSERTION_LIFETIME_SECONDS, and each jti counts once per
// client (the replay store remembers a claim until iat + 65 s: claiming with exp − 60 s remembers
// the jti until exp + 5 s, after which the assertion is refused as expired anyway).
import type { KeyObject } from 'node:crypto';
import { type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose';
import { gatewayError } from '../../shared/errors/index.js';
import type { ReplayGuard } from '../agentiam/replay-guard.js';

/** Longest accepted distance between now and an assertion's exp. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 30;

export async function verifyClientAssertion(
  assertion: string,
  key: KeyObject | JWTVerifyGetKey,
  expected: {
    readonly clientId: string;
    readonly audiences: readonly string[];
    readonly algorithms: readonly string[];
    readonly jtis: ReplayGuard;
  },
): Promise<void> {
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(assertion, key as never, {
      algorithms: [...expected.algorithms],
      issuer: expected.clientId,
      subject: expected.clientId,
      audience: [...expected.audiences],
      requiredClaims: ['exp', 'jti'],
      clockTolerance: CLOCK_SKEW_SECONDS,
    }));
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) {
      throw invalidClient(`client assertion refused (${error.code})`);
    }
    throw error;
  }
  const now = Math.floor(Date.now() / 1000);
  const exp = payload.exp as number;
  if (exp > now + MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) {
    throw invalidClient('client assertion exp is more than 5 minutes ahead');
  }
  if (typeof payload.jti !== 'string' || payload.jti === '') {
    throw invalidClient('client assertion has no jti');
  }
  const claimed = expected.jtis.claim(expected.clientId, payload.jti, exp - 60);
  if (claimed === 'replayed') throw invalidClient('client assertion jti already used');
  if (claimed === 'full') throw invalidClient('too many live client assertions; retry later');
}

function invalidClient(problem: string) {
  return gatewayError('OAUTH_INVALID_CLIENT', { problem });
}
