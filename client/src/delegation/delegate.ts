// `delegate`: the delegator signs an AgentDelegationCredential handing a subset of its tools to
// another agent, with its own key (the gateway never holds it). The document is exactly what
// `agent-gateway agentiam delegate` signs and the gateway's chain verifier accepts
// (docs/agentiam.md): issuer the delegator's did:key, subject the delegate's did:key naming
// tenant, agent, delegator and permittedTools, an Ed25519Signature2020 proof (assertionMethod,
// created at issuanceDate) made with Digital Bazaar's libraries over the offline loader.
//
// Options are checked before anything is signed, and when the credential delegated from is
// given, so are the rules of `agentiam delegate`: a link is refused here when the gateway would
// refuse it.
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { issue } from '@digitalbazaar/vc';
import {
  type AgentCredential,
  type AgentDelegationCredential,
  CONTEXTS,
  DELEGATION_CREDENTIAL_TYPE,
  isoSeconds,
  subjectOf,
} from './credential.js';
import { offlineDocumentLoader } from './document-loader.js';
import { DelegationError } from './errors.js';
import { ed25519PublicKeyBytes, type PrivateJwkInput, signingKey } from './keys.js';

/** The shortest and longest lifetimes `delegate` signs, as `agentiam delegate --ttl`. */
export const MIN_DELEGATION_TTL_SECONDS = 60;
export const MAX_DELEGATION_TTL_SECONDS = 30 * 24 * 3600;
const DEFAULT_TTL_SECONDS = 3600;

export interface DelegateOptions {
  /** The delegating agent: the caller itself. */
  readonly from: {
    readonly agentId: string;
    /** Its own private key (`privateKeyJwk` of the client configuration). */
    readonly privateKeyJwk: PrivateJwkInput;
    /** Its `z6Mk…` key or `did:key:z6Mk…`: optional, checked against the private key when given. */
    readonly publicKey?: string;
    readonly did?: string;
    /**
     * The credential it delegates from: its identity credential, or the last link of the chain
     * it received. When given, `delegate` refuses what the verifier would refuse (tools it does
     * not hold, an expiry past this credential's, a credential held by another key or agent),
     * and `tenantId` must match it.
     */
    readonly credential?: AgentCredential;
  };
  /** The delegate: its agent id and its `z6Mk…` key (or `did:key:z6Mk…`). */
  readonly to: { readonly agentId: string; readonly publicKey: string };
  /** The tools handed over: a non-empty subset of the delegator's. */
  readonly tools: readonly string[];
  /** Lifetime from now, 60 s to 30 days; default 3600. */
  readonly ttlSeconds?: number;
  readonly tenantId: string;
  /** The signing time (default: now); the credential is issued at its whole second. */
  readonly now?: Date;
}

/**
 * Signs an AgentDelegationCredential from `from` to `to` for `tools`, valid `ttlSeconds` from
 * now, with the delegator's own key. Throws DelegationError for unusable options and for a link
 * the gateway would refuse.
 */
export async function delegate(options: DelegateOptions): Promise<AgentDelegationCredential> {
  const tenantId = requiredString(options.tenantId, 'tenantId');
  const delegatorAgentId = requiredString(options.from?.agentId, 'from.agentId');
  const delegateAgentId = requiredString(options.to?.agentId, 'to.agentId');
  const delegatePublicKey = publicKeyOf(options.to.publicKey, 'to.publicKey');
  const tools = toolList(options.tools);
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (
    !Number.isInteger(ttlSeconds) ||
    ttlSeconds < MIN_DELEGATION_TTL_SECONDS ||
    ttlSeconds > MAX_DELEGATION_TTL_SECONDS
  ) {
    throw new DelegationError(
      'DELEGATION_OPTIONS_INVALID',
      `ttlSeconds must be whole seconds from ${MIN_DELEGATION_TTL_SECONDS} to ${MAX_DELEGATION_TTL_SECONDS}`,
      { field: 'ttlSeconds' },
    );
  }
  const now = options.now ?? new Date();
  if (Number.isNaN(now.getTime())) {
    throw new DelegationError('DELEGATION_OPTIONS_INVALID', 'now is not a valid date', {
      field: 'now',
    });
  }
  const signer = await signingKey(options.from.privateKeyJwk ?? {}, 'from.privateKeyJwk');
  checkClaimedKey(options.from, signer.publicKeyMultibase);
  const delegator = `did:key:${signer.publicKeyMultibase}`;
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const expiresAt = new Date(issuedAt.getTime() + ttlSeconds * 1000);
  if (options.from.credential !== undefined) {
    checkParent(options.from.credential, {
      delegator,
      delegatorAgentId,
      tenantId,
      tools,
      expiresAt,
    });
  }

  const document = {
    '@context': [CONTEXTS.credentialsV1, CONTEXTS.ed25519V1, CONTEXTS.agentiamV1],
    id: `urn:uuid:${globalThis.crypto.randomUUID()}`,
    type: ['VerifiableCredential', DELEGATION_CREDENTIAL_TYPE],
    issuer: delegator,
    issuanceDate: isoSeconds(issuedAt),
    expirationDate: isoSeconds(expiresAt),
    credentialSubject: {
      id: `did:key:${delegatePublicKey}`,
      tenantId,
      agentId: delegateAgentId,
      delegatorAgentId,
      permittedTools: tools,
    },
  };
  const suite = new Ed25519Signature2020({ key: signer, date: document.issuanceDate });
  const signed = await issue({
    credential: document,
    suite,
    documentLoader: offlineDocumentLoader,
  });
  return signed as unknown as AgentDelegationCredential;
}

/** `from.publicKey` and `from.did`, when given, must name the key of `from.privateKeyJwk`. */
function checkClaimedKey(from: DelegateOptions['from'], key: string): void {
  for (const [name, value] of [
    ['from.publicKey', from.publicKey],
    ['from.did', from.did],
  ] as const) {
    if (value !== undefined && publicKeyOf(value, name) !== key) {
      throw new DelegationError(
        'DELEGATION_KEY_INVALID',
        `${name} is not the public key of from.privateKeyJwk (did:key:${key})`,
        { field: name },
      );
    }
  }
}

/** The checks of `agentiam delegate`: the link must chain onto the credential it comes from. */
function checkParent(
  parent: AgentCredential,
  link: {
    delegator: string;
    delegatorAgentId: string;
    tenantId: string;
    tools: readonly string[];
    expiresAt: Date;
  },
): void {
  const field = 'from.credential';
  const subject = subjectOf(parent, field);
  const parentExpiry = new Date(String(parent.expirationDate));
  if (Number.isNaN(parentExpiry.getTime())) {
    throw new DelegationError('CREDENTIAL_MALFORMED', `${field} has no valid expirationDate`, {
      field,
    });
  }
  if (subject.id !== link.delegator || subject.agentId !== link.delegatorAgentId) {
    throw new DelegationError(
      'DELEGATION_BROKEN_LINK',
      `${field} is held by ${subject.id} (agent ${subject.agentId}), not by ${link.delegator} (agent ${link.delegatorAgentId})`,
      { field },
    );
  }
  if (subject.tenantId !== link.tenantId) {
    throw new DelegationError(
      'DELEGATION_OPTIONS_INVALID',
      `tenantId ${link.tenantId} is not the tenant of ${field} (${subject.tenantId})`,
      { field: 'tenantId' },
    );
  }
  const held = subject.permittedTools;
  const widened = held.includes('*') ? [] : link.tools.filter((tool) => !held.includes(tool));
  if (widened.length > 0) {
    throw new DelegationError(
      'DELEGATION_TOOLS_WIDENED',
      `the delegator does not hold ${widened.join(', ')} (it holds: ${held.join(', ')})`,
      { field: 'tools' },
    );
  }
  if (link.expiresAt > parentExpiry) {
    throw new DelegationError(
      'DELEGATION_EXPIRY_NOT_NESTED',
      `the link would expire at ${isoSeconds(link.expiresAt)}, after ${field} (${isoSeconds(parentExpiry)})`,
      { field: 'ttlSeconds' },
    );
  }
}

function requiredString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw new DelegationError('DELEGATION_OPTIONS_INVALID', `${field} must be a non-empty string`, {
      field,
    });
  }
  return value;
}

/** The `z6Mk…` key of `value` (a key or its did:key), checked to be an Ed25519 key. */
function publicKeyOf(value: unknown, field: string): string {
  const text = requiredString(value, field);
  const key = text.startsWith('did:key:') ? text.slice('did:key:'.length) : text;
  if (ed25519PublicKeyBytes(key) === null) {
    throw new DelegationError(
      'DELEGATION_OPTIONS_INVALID',
      `${field} is not an Ed25519 public key (z6Mk…) or its did:key`,
      { field },
    );
  }
  return key;
}

function toolList(tools: unknown): string[] {
  if (
    !Array.isArray(tools) ||
    tools.length === 0 ||
    !tools.every((tool) => typeof tool === 'string' && tool.trim().length > 0)
  ) {
    throw new DelegationError(
      'DELEGATION_OPTIONS_INVALID',
      'tools must be a non-empty array of tool names',
      { field: 'tools' },
    );
  }
  return [...new Set(tools as string[])];
}
