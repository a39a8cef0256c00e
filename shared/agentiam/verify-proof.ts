// Verifies the Ed25519Signature2020 proof of an AgentIAM credential with Digital Bazaar's
// @digitalbazaar/vc `verifyCredential`: the signature over the canonicalized credential, the
// proofPurpose assertionMethod, and — by the library's CredentialIssuancePurpose — that the
// verification method is listed under assertionMethod of its controller's DID document and that
// this controller is the credential's issuer (so a tenant CA key cannot sign as an agent, nor one
// tenant's key as another tenant).
//
// Dates and status are deliberately not judged here: the chain rules check them with their own
// codes (CREDENTIAL_EXPIRED, CREDENTIAL_REVOKED, …). The library checks dates against `now`, so it
// is given the credential's own issuanceDate; status checking is a no-op.
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { dateRegex, verifyCredential } from '@digitalbazaar/vc';
import { GatewayError } from '../errors/index.js';
import type { DocumentLoader } from './document-loader.js';

export type ProofVerification = { verified: true } | { verified: false; reason: string };

const VERIFIED: ProofVerification = Object.freeze({ verified: true });

async function statusNotChecked(): Promise<{ verified: boolean }> {
  return { verified: true };
}

export async function verifyCredentialProof(
  vc: Record<string, unknown>,
  loader: DocumentLoader,
): Promise<ProofVerification> {
  const { proof, issuanceDate } = vc;
  if (typeof proof !== 'object' || proof === null || Array.isArray(proof)) {
    return { verified: false, reason: 'the credential must carry exactly one proof' };
  }
  const issued = typeof issuanceDate === 'string' ? new Date(issuanceDate) : undefined;
  if (
    issued === undefined ||
    Number.isNaN(issued.getTime()) ||
    !dateRegex.test(issuanceDate as string)
  ) {
    return { verified: false, reason: 'issuanceDate is not a date-time' };
  }
  const result = await verifyCredential({
    credential: vc,
    suite: new Ed25519Signature2020(),
    documentLoader: loader,
    checkStatus: statusNotChecked,
    now: issued,
  });
  return result.verified ? VERIFIED : { verified: false, reason: failureReason(result.error) };
}

/**
 * The first message of the library's (possibly nested) errors; for a document the loader refused,
 * the loader's own message rather than jsonld.js's generic one about fetching.
 */
function failureReason(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 4; depth++) {
    if (Array.isArray(current)) current = current[0];
    else if (typeof current === 'object' && current !== null && 'errors' in current) {
      const { errors } = current as { errors: unknown };
      if (!Array.isArray(errors) || errors.length === 0) break;
      current = errors[0];
    } else break;
  }
  const cause = (current as { details?: { cause?: unknown } } | null)?.details?.cause;
  if (cause instanceof GatewayError) return cause.message;
  if (current instanceof Error) return current.message;
  return 'the proof does not verify';
}
