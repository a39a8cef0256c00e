// `@agent-gateway/client/delegation`: an agent hands a subset of its tools to another agent by
// signing an AgentDelegationCredential with its own key (the gateway never holds it), and a
// sub-agent presents the chain that ends at it.
//
// The document is exactly what `agent-gateway agentiam delegate` signs and the gateway's chain
// verifier accepts (docs/agentiam.md): W3C VC data model 1.1, issuer the delegator's did:key,
// subject the delegate's did:key naming tenant, agent, delegator and permittedTools, dates in
// UTC at whole seconds, an Ed25519Signature2020 proof (assertionMethod, created at issuanceDate)
// by the verification method `did:key:z6Mk…#z6Mk…`, made with Digital Bazaar's libraries.
//
// Nothing is fetched: the JSON-LD contexts are the package's own copies in contexts/ (byte for
// byte the gateway's schema/contexts/, served at GET /contexts/<file>), did:key documents are
// computed from the key, and any other URL is refused. A context decides what a signed term
// means, so it is pinned, never downloaded at signing time.
//
// The public types below are the package's own: no type of the untyped Digital Bazaar libraries
// reaches a consumer's declarations.
import { readFile } from 'node:fs/promises';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import { issue } from '@digitalbazaar/vc';
import { decodeBase58btc } from './base58btc.js';

export const DELEGATION_CREDENTIAL_TYPE = 'AgentDelegationCredential';

/** The shortest and longest lifetimes `delegate` signs, as `agentiam delegate --ttl`. */
export const MIN_DELEGATION_TTL_SECONDS = 60;
export const MAX_DELEGATION_TTL_SECONDS = 30 * 24 * 3600;
const DEFAULT_TTL_SECONDS = 3600;

const CONTEXTS = {
  credentialsV1: 'https://www.w3.org/2018/credentials/v1',
  ed25519V1: 'https://w3id.org/security/suites/ed25519-2020/v1',
  didV1: 'https://www.w3.org/ns/did/v1',
  agentiamV1: 'https://agent-gateway.dev/contexts/agentiam/v1',
} as const;

export const DELEGATION_ERROR_CODES = [
  /** An option is missing or malformed; `field` names it. */
  'DELEGATION_OPTIONS_INVALID',
  /** The delegator's private key is not an Ed25519 JWK with `d`, or does not match `publicKey`/`did`. */
  'DELEGATION_KEY_INVALID',
  /** The credential delegated from is not held by this key or agent (the link would not chain). */
  'DELEGATION_BROKEN_LINK',
  /** Tools the delegator does not hold. */
  'DELEGATION_TOOLS_WIDENED',
  /** The link would outlive the credential it is delegated from. */
  'DELEGATION_EXPIRY_NOT_NESTED',
  /** A credential given as input does not have the shape of an AgentIAM credential. */
  'CREDENTIAL_MALFORMED',
  /** The signer asked for a JSON-LD document that is not one of the package's own. */
  'DOCUMENT_NOT_AVAILABLE',
] as const;

export type DelegationErrorCode = (typeof DELEGATION_ERROR_CODES)[number];

/**
 * Why `delegate` or `chainFor` refused. The `DELEGATION_*` codes name the rule the gateway's
 * verifier would break, so a refused link is one the gateway would have refused too.
 */
export class DelegationError extends Error {
  readonly code: DelegationErrorCode;
  /** The option at fault, when one is (`from.privateKeyJwk`, `tools`, `ttlSeconds`, …). */
  readonly field: string | undefined;

  constructor(
    code: DelegationErrorCode,
    message: string,
    options: { field?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DelegationError';
    this.code = code;
    this.field = options.field;
  }
}

/** An OKP Ed25519 private JWK (RFC 8037), as spawn answers in `private_key_jwk`. */
export interface Ed25519PrivateJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  /** The public key, base64url. */
  readonly x: string;
  /** The 32-byte seed, base64url. */
  readonly d: string;
}

/** Any JWK-shaped object (a `JsonWebKey`, spawn's answer); checked to be an Ed25519PrivateJwk. */
export interface PrivateJwkInput {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: string;
  readonly d?: string;
}

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
  const signer = await signingKey(options.from);
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

/** What a sub-agent presents: `delegation` of its client configuration. */
export interface DelegationPresentation {
  /** The identity credential at the root of the chain (issued to the first delegator). */
  readonly rootCredential: AgentCredential;
  /** The links from the root to the presenting agent, in order. */
  readonly chain: readonly AgentCredential[];
}

/**
 * The presentation of the agent a link was made for: `held` (the delegator's own identity
 * credential, or the presentation it received itself) followed by `link`. Refuses a link that
 * does not continue `held` (issued by another key or for another agent than its last subject).
 *
 * ```ts
 * const link = await delegate({ from, to, tools: ['search'], tenantId });
 * const sub = createGatewayClient({ ...config, agentId: to.agentId, privateKeyJwk: subKey,
 *   delegation: chainFor(identityOfA, link) });
 * ```
 */
export function chainFor(
  held: AgentCredential | DelegationPresentation,
  link: AgentCredential,
): DelegationPresentation {
  const base: DelegationPresentation = isPresentation(held)
    ? { rootCredential: held.rootCredential, chain: held.chain }
    : { rootCredential: held, chain: [] };
  const last = base.chain.at(-1) ?? base.rootCredential;
  const lastSubject = subjectOf(last, 'held');
  const linkSubject = subjectOf(link, 'link');
  if (link.issuer !== lastSubject.id || linkSubject.delegatorAgentId !== lastSubject.agentId) {
    throw new DelegationError(
      'DELEGATION_BROKEN_LINK',
      `the link is issued by ${String(link.issuer)} for delegator ${String(linkSubject.delegatorAgentId)}, but the chain ends at ${lastSubject.id} (agent ${lastSubject.agentId})`,
      { field: 'link' },
    );
  }
  return { rootCredential: base.rootCredential, chain: [...base.chain, link] };
}

function isPresentation(value: unknown): value is DelegationPresentation {
  return (
    typeof value === 'object' &&
    value !== null &&
    'rootCredential' in value &&
    'chain' in value &&
    Array.isArray(value.chain)
  );
}

interface Subject {
  readonly id: string;
  readonly tenantId: string;
  readonly agentId: string;
  readonly permittedTools: readonly string[];
}

function subjectOf(credential: unknown, field: string): Subject & Record<string, unknown> {
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
  return subject as Subject & Record<string, unknown>;
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

type KeyPair = Awaited<ReturnType<typeof Ed25519VerificationKey2020.generate>>;

/** The delegator's key pair from its JWK, named by its did:key verification method. */
async function signingKey(from: DelegateOptions['from']): Promise<KeyPair> {
  const field = 'from.privateKeyJwk';
  const jwk: PrivateJwkInput = from.privateKeyJwk ?? {};
  const seed = typeof jwk.d === 'string' ? base64UrlBytes(jwk.d) : null;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || seed === null) {
    throw new DelegationError(
      'DELEGATION_KEY_INVALID',
      `${field} must be a private Ed25519 JWK (kty OKP, crv Ed25519, x, d)`,
      { field },
    );
  }
  if (seed.length !== 32) {
    throw new DelegationError('DELEGATION_KEY_INVALID', `${field}: d is not 32 bytes`, { field });
  }
  const key = (await Ed25519VerificationKey2020.generate({ seed })).publicKeyMultibase;
  const x = base64UrlBytes(jwk.x);
  const derived = ed25519PublicKeyBytes(key);
  if (x === null || derived === null || !sameBytes(x, derived)) {
    throw new DelegationError('DELEGATION_KEY_INVALID', `${field}: x is not the public key of d`, {
      field,
    });
  }
  for (const [name, value] of [
    ['from.publicKey', from.publicKey],
    ['from.did', from.did],
  ] as const) {
    if (value !== undefined && publicKeyOf(value, name) !== key) {
      throw new DelegationError(
        'DELEGATION_KEY_INVALID',
        `${name} is not the public key of ${field} (did:key:${key})`,
        { field: name },
      );
    }
  }
  const did = `did:key:${key}`;
  return Ed25519VerificationKey2020.generate({ seed, id: `${did}#${key}`, controller: did });
}

function base64UrlBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * The 32 bytes of a `z6Mk…` key: multibase base58btc (`z`) of the multicodec ed25519-pub prefix
 * 0xed 0x01 and the key, always 48 characters; null for anything else (the gateway's check,
 * shared/identity/ed25519-multibase.ts, over the same base58btc codec).
 */
function ed25519PublicKeyBytes(multibase: string): Uint8Array | null {
  if (multibase.length !== 48 || multibase[0] !== 'z') return null;
  const bytes = decodeBase58btc(multibase.slice(1));
  if (bytes?.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01) return null;
  return bytes.slice(2);
}

/** `2026-07-04T10:00:00Z`: ISO 8601 in UTC, milliseconds dropped. */
function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

// --- The offline JSON-LD document loader -------------------------------------------------------

/** What jsonld.js expects of a document loader. */
export type OfflineDocumentLoader = (url: string) => Promise<{
  contextUrl: null;
  documentUrl: string;
  document: object;
  tag?: 'static';
}>;

const CONTEXTS_DIRECTORY = new URL('../contexts/', import.meta.url);
let contexts: Promise<ReadonlyMap<string, object>> | undefined;

/** The package's contexts, by URI, read once from contexts/ (index.json maps URI → file). */
function packageContexts(): Promise<ReadonlyMap<string, object>> {
  contexts ??= (async () => {
    const read = async (file: string) =>
      JSON.parse(await readFile(new URL(file, CONTEXTS_DIRECTORY), 'utf8')) as unknown;
    const index = (await read('index.json')) as Record<string, string>;
    const entries = await Promise.all(
      Object.entries(index).map(
        async ([uri, file]) => [uri, (await read(file)) as object] as const,
      ),
    );
    return new Map(entries);
  })();
  return contexts;
}

/**
 * The loader `delegate` signs with, for verifying delegations with Digital Bazaar's libraries
 * too: the package's own contexts and did:key documents computed from the key. It never touches
 * the network; any other URL (another context, a did:svc, an https document) is refused with
 * DOCUMENT_NOT_AVAILABLE.
 */
export const offlineDocumentLoader: OfflineDocumentLoader = async (url) => {
  const context = (await packageContexts()).get(url);
  if (context !== undefined) {
    // 'static' lets jsonld.js cache the processed context: these never change.
    return { contextUrl: null, documentUrl: url, document: context, tag: 'static' };
  }
  const document = didKeyDocument(url);
  if (document === null) {
    throw new DelegationError(
      'DOCUMENT_NOT_AVAILABLE',
      `${url} is not available offline: only the package's JSON-LD contexts and did:key documents load`,
    );
  }
  return { contextUrl: null, documentUrl: url, document };
};

/** The did:key document of `did:key:z6Mk…`, or its one verification method for `…#z6Mk…`. */
function didKeyDocument(url: string): object | null {
  if (!url.startsWith('did:key:')) return null;
  const [did = '', fragment] = url.split('#', 2);
  const key = did.slice('did:key:'.length);
  if (ed25519PublicKeyBytes(key) === null) return null;
  const methodId = `${did}#${key}`;
  if (fragment !== undefined && fragment !== key) return null;
  const method = {
    id: methodId,
    type: 'Ed25519VerificationKey2020',
    controller: did,
    publicKeyMultibase: key,
  };
  const context = [CONTEXTS.didV1, CONTEXTS.ed25519V1];
  if (fragment !== undefined) return { '@context': context, ...method };
  return {
    '@context': context,
    id: did,
    verificationMethod: [method],
    authentication: [methodId],
    assertionMethod: [methodId],
    capabilityDelegation: [methodId],
    capabilityInvocation: [methodId],
  };
}
