// The three credentials of AgentIAM as W3C Verifiable Credentials (data model 1.1), built as
// unsigned documents and signed with an Ed25519Signature2020 proof by Digital Bazaar's
// @digitalbazaar/vc `issue` (RDF dataset canonicalization in safe mode: every term must be
// defined by a listed context, which schema/contexts/agentiam-v1.jsonld guarantees for ours).
//
// - identity: issued by the tenant CA (did:svc) to an agent's did:key, revocable through its
//   credentialStatus entry in a Bitstring Status List;
// - delegation: issued by a delegating agent's did:key to a delegate's did:key, signed with the
//   delegator's own key (anyone holding it can make one with a standard VC library);
// - status list: the tenant CA's BitstringStatusListCredential holding the revocation bits.
//
// Dates are ISO 8601 in UTC at second precision (`2026-07-04T10:00:00Z`), truncated.
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import { issue } from '@digitalbazaar/vc';
import { gatewayError } from '../errors/index.js';
import { CONTEXT_URIS } from './contexts.js';
import { agentDid, tenantDid } from './dids.js';
import type { DocumentLoader } from './document-loader.js';
import type { Ed25519KeyMaterial } from './ed25519-keys.js';

export const IDENTITY_CREDENTIAL_TYPE = 'AgentIdentityCredential';
export const DELEGATION_CREDENTIAL_TYPE = 'AgentDelegationCredential';
export const STATUS_LIST_CREDENTIAL_TYPE = 'BitstringStatusListCredential';
export const STATUS_PURPOSE = 'revocation';

export interface IdentityCredentialOptions {
  /** The credential's UUID; written as `urn:uuid:<uuid>` (a `urn:uuid:` id is kept as is). */
  readonly id: string;
  readonly tenantId: string;
  readonly agentId: string;
  /** The agent's `z6Mk…` key: the subject is its did:key. */
  readonly agentPublicKey: string;
  readonly permittedTools: readonly string[];
  /** Written as `credentialSubject.supervisingUserId`; the credential names none when absent. */
  readonly supervisingUserId?: string | undefined;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  /** The status-list credential's URL (`<publicUrl>/api/v1/agentiam/status-lists/<id>`). */
  readonly statusListUrl: string;
  readonly statusListIndex: number;
}

export interface DelegationCredentialOptions {
  /** The credential's UUID; written as `urn:uuid:<uuid>` (a `urn:uuid:` id is kept as is). */
  readonly id: string;
  readonly tenantId: string;
  readonly delegatorPublicKey: string;
  readonly delegatorAgentId: string;
  readonly delegatePublicKey: string;
  readonly delegateAgentId: string;
  readonly permittedTools: readonly string[];
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

export interface StatusListCredentialOptions {
  /** The list's URL, which is also the credential's id. */
  readonly url: string;
  readonly tenantId: string;
  readonly issuedAt: Date;
  /** `u` + base64url (no padding) of the GZIP-compressed bitstring. */
  readonly encodedList: string;
}

export interface SigningKey {
  /** The verification method the proof names; its DID (before `#`) is the key's controller. */
  readonly verificationMethod: string;
  readonly key: Ed25519KeyMaterial;
}

export function identityCredentialDocument(
  options: IdentityCredentialOptions,
): Record<string, unknown> {
  return {
    '@context': [
      CONTEXT_URIS.credentialsV1,
      CONTEXT_URIS.statusV1,
      CONTEXT_URIS.ed25519V1,
      CONTEXT_URIS.agentiamV1,
    ],
    id: credentialUrn(options.id),
    type: ['VerifiableCredential', IDENTITY_CREDENTIAL_TYPE],
    issuer: tenantDid(options.tenantId),
    issuanceDate: isoSeconds(options.issuedAt),
    expirationDate: isoSeconds(options.expiresAt),
    credentialSubject: {
      id: agentDid(options.agentPublicKey),
      tenantId: options.tenantId,
      agentId: options.agentId,
      permittedTools: [...options.permittedTools],
      nonTransferable: true,
      ...(options.supervisingUserId === undefined
        ? {}
        : { supervisingUserId: options.supervisingUserId }),
    },
    credentialStatus: {
      id: `${options.statusListUrl}#${options.statusListIndex}`,
      type: 'BitstringStatusListEntry',
      statusPurpose: STATUS_PURPOSE,
      statusListIndex: String(options.statusListIndex),
      statusListCredential: options.statusListUrl,
    },
  };
}

export function delegationCredentialDocument(
  options: DelegationCredentialOptions,
): Record<string, unknown> {
  return {
    '@context': [CONTEXT_URIS.credentialsV1, CONTEXT_URIS.ed25519V1, CONTEXT_URIS.agentiamV1],
    id: credentialUrn(options.id),
    type: ['VerifiableCredential', DELEGATION_CREDENTIAL_TYPE],
    issuer: agentDid(options.delegatorPublicKey),
    issuanceDate: isoSeconds(options.issuedAt),
    expirationDate: isoSeconds(options.expiresAt),
    credentialSubject: {
      id: agentDid(options.delegatePublicKey),
      tenantId: options.tenantId,
      agentId: options.delegateAgentId,
      delegatorAgentId: options.delegatorAgentId,
      permittedTools: [...options.permittedTools],
    },
  };
}

export function statusListCredentialDocument(
  options: StatusListCredentialOptions,
): Record<string, unknown> {
  return {
    '@context': [CONTEXT_URIS.credentialsV1, CONTEXT_URIS.statusV1, CONTEXT_URIS.ed25519V1],
    id: options.url,
    type: ['VerifiableCredential', STATUS_LIST_CREDENTIAL_TYPE],
    issuer: tenantDid(options.tenantId),
    issuanceDate: isoSeconds(options.issuedAt),
    credentialSubject: {
      id: `${options.url}#list`,
      type: 'BitstringStatusList',
      statusPurpose: STATUS_PURPOSE,
      encodedList: options.encodedList,
    },
  };
}

/**
 * The document with an Ed25519Signature2020 proof (proofPurpose assertionMethod, created at the
 * document's issuanceDate) by `signer`. The document is not changed.
 */
export async function signCredential(
  document: Readonly<Record<string, unknown>>,
  signer: SigningKey,
  loader: DocumentLoader,
): Promise<Record<string, unknown>> {
  const hash = signer.verificationMethod.indexOf('#');
  const keyPair = await Ed25519VerificationKey2020.generate({
    seed: signer.key.secretKey,
    id: signer.verificationMethod,
    controller: hash === -1 ? signer.verificationMethod : signer.verificationMethod.slice(0, hash),
  });
  if (keyPair.publicKeyMultibase !== signer.key.publicKeyMultibase) {
    throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
      reason: `the secret key of ${signer.verificationMethod} does not match its public key`,
    });
  }
  const created = document.issuanceDate;
  const suite = new Ed25519Signature2020(
    typeof created === 'string' ? { key: keyPair, date: created } : { key: keyPair },
  );
  try {
    return await issue({ credential: { ...document }, suite, documentLoader: loader });
  } catch (error) {
    // Only a bug reaches this: our documents use defined terms and well-formed values.
    throw gatewayError('INTERNAL_ERROR', undefined, { cause: error });
  }
}

function credentialUrn(id: string): string {
  return id.startsWith('urn:uuid:') ? id : `urn:uuid:${id}`;
}

/** `2026-07-04T10:00:00Z`: ISO 8601 in UTC, milliseconds dropped. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
