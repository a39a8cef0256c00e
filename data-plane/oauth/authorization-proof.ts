// The agent's proof at the authorization endpoint (docs/oauth.md): a compact JWS signed by the
// agent's registered Ed25519 key, protected header { alg: EdDSA, typ: agent-authz+jwt,
// kid: did:key:z6Mk…#z6Mk… } and nothing else, payload { iss: client_id, aud: issuer, iat, jti,
// code_challenge }. Accepted while |now − iat| ≤ 60 s; its jti is single-use (the caller claims
// it in the data plane's Agent-Proof replay store). Binding the code challenge means a captured
// proof cannot authorize a code for another verifier.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify } from 'jose';
import { agentVerificationMethodId } from '../../shared/agentiam/dids.js';
import { JTI_MAX_LENGTH, PROOF_WINDOW_SECONDS } from '../../shared/agentiam/proof-of-possession.js';
import { decodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';

export const AGENT_AUTHZ_PROOF_TYPE = 'agent-authz+jwt';
const MAX_PROOF_LENGTH = 4096;
const HEADER_PARAMETERS = new Set(['alg', 'typ', 'kid']);

export interface AuthorizationProofExpectation {
  /** The agent's z6Mk… key. */
  readonly publicKeyMultibase: string;
  readonly clientId: string;
  readonly issuer: string;
  readonly codeChallenge: string;
  readonly now: Date;
}

export type AuthorizationProofResult =
  | { readonly ok: true; readonly jti: string; readonly iat: number }
  | { readonly ok: false; readonly problem: string };

export async function verifyAuthorizationProof(
  jws: string,
  expected: AuthorizationProofExpectation,
): Promise<AuthorizationProofResult> {
  if (jws.length > MAX_PROOF_LENGTH) return refused('agent_proof is too long');
  const key = publicKeyOf(expected.publicKeyMultibase);
  if (key === undefined) return refused('the agent has no Ed25519 key');
  const kid = agentVerificationMethodId(expected.publicKeyMultibase);
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    verified = await jwtVerify(jws, key, {
      algorithms: ['EdDSA'],
      typ: AGENT_AUTHZ_PROOF_TYPE,
      issuer: expected.clientId,
      audience: expected.issuer,
      requiredClaims: ['iat', 'jti'],
      currentDate: expected.now,
      // iat is judged below, both ways; exp is not required.
      maxTokenAge: undefined,
    });
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) {
      return refused(`agent_proof refused (${error.code}: ${error.message})`);
    }
    throw error;
  }
  const { payload, protectedHeader } = verified;
  if (protectedHeader.kid !== kid) return refused(`agent_proof kid is not the agent key ${kid}`);
  const extra = Object.keys(protectedHeader).filter((name) => !HEADER_PARAMETERS.has(name));
  if (extra.length > 0) return refused(`agent_proof header parameters ${extra.join(', ')}`);
  const { iat, jti } = payload;
  if (typeof iat !== 'number' || !Number.isInteger(iat)) return refused('iat must be an integer');
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > JTI_MAX_LENGTH) {
    return refused(`jti must be a string of 1-${JTI_MAX_LENGTH} characters`);
  }
  const now = Math.floor(expected.now.getTime() / 1000);
  if (Math.abs(now - iat) > PROOF_WINDOW_SECONDS) {
    return refused(`agent_proof iat ${iat} is more than ${PROOF_WINDOW_SECONDS} s from now`);
  }
  if (payload.code_challenge !== expected.codeChallenge) {
    return refused('agent_proof code_challenge is not the request code_challenge');
  }
  return { ok: true, jti, iat };
}

function refused(problem: string): AuthorizationProofResult {
  return { ok: false, problem };
}

const keys = new Map<string, KeyObject>();

function publicKeyOf(publicKeyMultibase: string): KeyObject | undefined {
  const cached = keys.get(publicKeyMultibase);
  if (cached) return cached;
  const raw = decodeEd25519PublicKey(publicKeyMultibase);
  if (raw === undefined) return undefined;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') },
    format: 'jwk',
  });
  if (keys.size >= 1024) keys.delete(keys.keys().next().value as string);
  keys.set(publicKeyMultibase, key);
  return key;
}
