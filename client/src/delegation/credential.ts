// What an AgentIAM credential looks like to the delegation helpers (docs/agentiam.md): the W3C VC
// data model 1.1 document `delegate` signs, the JSON-LD contexts it names, its dates in UTC at
// whole seconds, and the one reading every check makes of a credential given as input, its
// subject. Credentials given as input are plain JSON: their shape is checked here, never assumed.
import { DelegationError } from './errors.js';

export const DELEGATION_CREDENTIAL_TYPE = 'AgentDelegationCredential';

/** The context URIs the documents name; their content is the package's own copy (contexts/). */
export const CONTEXTS = {
  credentialsV1: 'https://www.w3.org/2018/credentials/v1',
  ed25519V1: 'https://w3id.org/security/suites/ed25519-2020/v1',
  didV1: 'https://www.w3.org/ns/did/v1',
  agentiamV1: 'https://agent-gateway.dev/contexts/agentiam/v1',
} as const;

/** An AgentIAM credential as a JSON object (identity or delegation), signed. */
export type AgentCredential = Record<string, unknown>;

export interface AgentDelegationCredential extends Record<string, unknown> {
  readonly '@context': readonly string[];
  /** `urn:uuid:<uuid>`. */
  readonly id: string;
  readonly type: readonly ['VerifiableCredential', 'AgentDelegationCredential'];
  /** The delegator's `did:key:z6Mk…`. */
  readonly issuer: string;
  readonly issuanceDate: string;
  readonly expirationDate: string;
  readonly credentialSubject: {
    /** The delegate's `did:key:z6Mk…`. */
    readonly id: string;
    readonly tenantId: string;
    readonly agentId: string;
    readonly delegatorAgentId: string;
    readonly permittedTools: readonly string[];
  };
  readonly proof: {
    readonly type: 'Ed25519Signature2020';
    readonly created: string;
    readonly verificationMethod: string;
    readonly proofPurpose: 'assertionMethod';
    readonly proofValue: string;
  };
}

/** The subject fields every AgentIAM credential has. */
export interface CredentialSubject {
  readonly id: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly permittedTools: readonly string[];
}

/**
 * The subject of `credential`, checked to have the fields every AgentIAM credential's has; throws
 * CREDENTIAL_MALFORMED naming `field` otherwise.
 */
export function subjectOf(
  credential: unknown,
  field: string,
): CredentialSubject & Record<string, unknown> {
  const subject =
    typeof credential === 'object' && credential !== null && 'credentialSubject' in credential
      ? (credential.credentialSubject as Record<string, unknown> | null)
      : null;
  const tools = subject?.permittedTools;
  if (
    subject === null ||
    typeof subject !== 'object' ||
    typeof subject.id !== 'string' ||
    typeof subject.tenantId !== 'string' ||
    typeof subject.agentId !== 'string' ||
    !Array.isArray(tools) ||
    !tools.every((tool) => typeof tool === 'string')
  ) {
    throw new DelegationError(
      'CREDENTIAL_MALFORMED',
      `${field} is not an AgentIAM credential: expected credentialSubject {id, tenantId, agentId, permittedTools}`,
      { field },
    );
  }
  return subject as CredentialSubject & Record<string, unknown>;
}

/** `2026-07-04T10:00:00Z`: ISO 8601 in UTC, milliseconds dropped. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
