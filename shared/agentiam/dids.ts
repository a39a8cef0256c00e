// The two DID methods of AgentIAM. A tenant is `did:svc:<tenantId>`, whose DID document lists its
// CA keys (the active one as #agentiam-ca, retired ones still in their window as
// #agentiam-ca-<kid>) under assertionMethod; it issues identity and status-list credentials. An
// agent is `did:key:<z6Mk…>`, its document computed from the key alone (the did:key method,
// Ed25519VerificationKey2020 form); it issues delegation credentials.
//
// Both documents start with the DID v1 context, which lets jsonld-signatures read the
// verification relationships without framing, and carry the Ed25519 2020 suite context that
// defines the key type.
import { isEd25519PublicKey } from '../identity/ed25519-multibase.js';
import type { AuditKeyConfig, CaKeyConfig } from '../snapshot/types.js';
import { CONTEXT_URIS } from './contexts.js';

export const CA_FRAGMENT = 'agentiam-ca';
/** The audit checkpoint key's fragment (docs/audit.md, "Checkpoints"). */
export const AUDIT_FRAGMENT = 'audit-checkpoint';

const SVC_PREFIX = 'did:svc:';
const KEY_PREFIX = 'did:key:';
const VERIFICATION_METHOD_TYPE = 'Ed25519VerificationKey2020';
/** A did:svc method-specific id: DID syntax idchars without ':' or '%' (tenant ids are UUIDs). */
const TENANT_ID = /^[A-Za-z0-9._-]+$/;

export type ParsedDid =
  | { readonly method: 'svc'; readonly tenantId: string }
  | { readonly method: 'key'; readonly publicKeyMultibase: string };

export function tenantDid(tenantId: string): string {
  return `${SVC_PREFIX}${tenantId}`;
}

/** The verification method of the tenant's active CA key. */
export function tenantVerificationMethodId(tenantId: string): string {
  return `${tenantDid(tenantId)}#${CA_FRAGMENT}`;
}

export function agentDid(publicKeyMultibase: string): string {
  return `${KEY_PREFIX}${publicKeyMultibase}`;
}

export function agentVerificationMethodId(publicKeyMultibase: string): string {
  return `${agentDid(publicKeyMultibase)}#${publicKeyMultibase}`;
}

/** The method and its id for a DID (no path, query or fragment); null for anything else. */
export function parseDid(did: string): ParsedDid | null {
  if (did.startsWith(SVC_PREFIX)) {
    const tenantId = did.slice(SVC_PREFIX.length);
    return TENANT_ID.test(tenantId) ? { method: 'svc', tenantId } : null;
  }
  if (did.startsWith(KEY_PREFIX)) {
    const publicKeyMultibase = did.slice(KEY_PREFIX.length);
    return isEd25519PublicKey(publicKeyMultibase) ? { method: 'key', publicKeyMultibase } : null;
  }
  return null;
}

/**
 * The DID document of `did:svc:<tenantId>`: each active key as #agentiam-ca (a tenant has one),
 * each retired key as #agentiam-ca-<kid>, all under assertionMethod. The caller passes only the
 * keys that still verify (retired ones within their window). The gateway's audit checkpoint keys
 * are listed too, as #audit-checkpoint (the active one) and #audit-checkpoint-<id> (retired ones,
 * whose checkpoints still verify), under no verification relationship: they sign checkpoints,
 * never credentials, so a verifier never accepts a credential signed by one.
 */
export function tenantDidDocument(
  tenantId: string,
  keys: readonly CaKeyConfig[],
  auditKeys: readonly AuditKeyConfig[] = [],
): Record<string, unknown> {
  const did = tenantDid(tenantId);
  const method = (fragment: string, key: CaKeyConfig | AuditKeyConfig) => ({
    id: key.status === 'active' ? `${did}#${fragment}` : `${did}#${fragment}-${key.id}`,
    type: VERIFICATION_METHOD_TYPE,
    controller: did,
    publicKeyMultibase: key.publicKeyMultibase,
  });
  const methods = keys.map((key) => method(CA_FRAGMENT, key));
  return {
    '@context': [CONTEXT_URIS.didV1, CONTEXT_URIS.ed25519V1],
    id: did,
    verificationMethod: [...methods, ...auditKeys.map((key) => method(AUDIT_FRAGMENT, key))],
    assertionMethod: methods.map((m) => m.id),
  };
}

/**
 * The did:key document of an Ed25519 `z6Mk…` key (its one verification method
 * `did:key:z6Mk…#z6Mk…`, under every relationship but keyAgreement); null for any other string.
 */
export function didKeyDocument(publicKeyMultibase: string): Record<string, unknown> | null {
  if (!isEd25519PublicKey(publicKeyMultibase)) return null;
  const did = agentDid(publicKeyMultibase);
  const methodId = agentVerificationMethodId(publicKeyMultibase);
  return {
    '@context': [CONTEXT_URIS.didV1, CONTEXT_URIS.ed25519V1],
    id: did,
    verificationMethod: [
      { id: methodId, type: VERIFICATION_METHOD_TYPE, controller: did, publicKeyMultibase },
    ],
    authentication: [methodId],
    assertionMethod: [methodId],
    capabilityDelegation: [methodId],
    capabilityInvocation: [methodId],
  };
}
