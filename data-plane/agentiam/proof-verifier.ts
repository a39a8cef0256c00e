// Checks credential proofs (Ed25519Signature2020) for the data plane, with a cache: a proof
// check is JSON-LD canonicalization and costs milliseconds, a repeated credential (every call of
// an agent presents the same one) must cost a hash and a Map lookup (DESIGN.md §6, §10).
//
// What a cached answer depends on: the credential's exact JSON text (its SHA-256 is the key) and
// the CA key set of the tenant whose key signed it (`keyEpoch`, part of the key), nothing else —
// did:key documents follow from the key. Dates and revocation are not part of a proof check: the
// chain rules read them per call (the status bits are in the compiled snapshot), so a revocation
// takes effect with the snapshot that carries it, with no cache to invalidate. A credential
// verified only by a retired CA key is cached until that key's window ends.
//
// Retired keys (DESIGN.md §6): after a rotation #agentiam-ca names the new key. A proof that fails
// against it is retried with a document in which #agentiam-ca is each retired key still in its
// window, so credentials signed before the rotation keep working until they expire.
//
// The cache is a bounded LRU (Map insertion order); a pending check is shared by concurrent
// requests for the same credential. Failures are cached too: junk sent again costs no more work.
import { createHash } from 'node:crypto';
import { CA_FRAGMENT, parseDid } from '../../shared/agentiam/dids.js';
import {
  createDocumentLoader,
  type DocumentLoader,
} from '../../shared/agentiam/document-loader.js';
import {
  type ProofVerification,
  verifyCredentialProof,
} from '../../shared/agentiam/verify-proof.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type {
  CompiledIdentity,
  CompiledRetiredKey,
  CompiledSnapshot,
} from '../store/compiled-snapshot.js';
import { MAX_CREDENTIAL_JSON_BYTES } from './limits.js';

export const DEFAULT_PROOF_CACHE_SIZE = 10_000;

interface CacheEntry {
  readonly result: Promise<ProofVerification>;
  /** Epoch ms after which the entry must be checked again (a retired key's window). */
  validUntilMs: number;
}

type Counter = ReturnType<GatewayMetrics['credentialProofChecks']['labels']>;

const TOO_LARGE: ProofVerification = Object.freeze({
  verified: false,
  reason: `the credential is larger than ${MAX_CREDENTIAL_JSON_BYTES} bytes of JSON`,
});

export class ProofVerifier {
  readonly #capacity: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #loaders = new WeakMap<CompiledSnapshot, DocumentLoader>();
  readonly #counters: {
    readonly [cache in 'hit' | 'miss']: Record<'verified' | 'failed', Counter>;
  };

  constructor(options: { metrics: GatewayMetrics; cacheSize?: number | undefined }) {
    this.#capacity = options.cacheSize ?? DEFAULT_PROOF_CACHE_SIZE;
    const counter = (cache: string, result: string) =>
      options.metrics.credentialProofChecks.labels({ cache, result });
    this.#counters = {
      hit: { verified: counter('hit', 'verified'), failed: counter('hit', 'failed') },
      miss: { verified: counter('miss', 'verified'), failed: counter('miss', 'failed') },
    };
  }

  get size(): number {
    return this.#cache.size;
  }

  /** The proof check of `vc` against the CA keys of `snapshot` (did:key issuers need none). */
  async verify(
    snapshot: CompiledSnapshot,
    vc: Record<string, unknown>,
    nowMs = Date.now(),
  ): Promise<ProofVerification> {
    let json: string;
    try {
      json = JSON.stringify(vc);
    } catch {
      return { verified: false, reason: 'the credential is not JSON' };
    }
    if (json.length > MAX_CREDENTIAL_JSON_BYTES) return TOO_LARGE;
    const issuer = signingTenant(snapshot, vc);
    const key = `${createHash('sha256').update(json).digest('base64url')}|${issuer?.keyEpoch ?? ''}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.validUntilMs > nowMs) {
      // Most recently used last.
      this.#cache.delete(key);
      this.#cache.set(key, cached);
      return this.#count('hit', cached.result);
    }
    const entry: CacheEntry = {
      result: this.#check(snapshot, vc, issuer, nowMs, (untilMs) => {
        entry.validUntilMs = untilMs;
      }),
      validUntilMs: Number.POSITIVE_INFINITY,
    };
    this.#cache.delete(key);
    this.#cache.set(key, entry);
    if (this.#cache.size > this.#capacity) {
      this.#cache.delete(this.#cache.keys().next().value as string);
    }
    return this.#count('miss', entry.result);
  }

  async #count(
    cache: 'hit' | 'miss',
    pending: Promise<ProofVerification>,
  ): Promise<ProofVerification> {
    const result = await pending;
    this.#counters[cache][result.verified ? 'verified' : 'failed'].inc();
    return result;
  }

  async #check(
    snapshot: CompiledSnapshot,
    vc: Record<string, unknown>,
    issuer: CompiledIdentity | undefined,
    nowMs: number,
    limitTo: (untilMs: number) => void,
  ): Promise<ProofVerification> {
    const result = await checkProof(vc, this.#loaderOf(snapshot));
    if (result.verified || issuer === undefined) return result;
    if (proofMethod(vc) !== `${issuer.did}#${CA_FRAGMENT}`) return result;
    for (const retired of issuer.retiredKeys) {
      if (retired.resolvableUntilMs <= nowMs) continue;
      const retry = await checkProof(vc, retiredKeyLoader(snapshot, issuer, retired));
      if (retry.verified) {
        limitTo(retired.resolvableUntilMs);
        return retry;
      }
    }
    return result;
  }

  /** One loader per snapshot: did:svc of any tenant resolves to its active CA key. */
  #loaderOf(snapshot: CompiledSnapshot): DocumentLoader {
    let loader = this.#loaders.get(snapshot);
    if (loader === undefined) {
      loader = createDocumentLoader((did) => verifierDocument(snapshot, did));
      this.#loaders.set(snapshot, loader);
    }
    return loader;
  }
}

/** The library's answer; a throw (hostile input reaching a corner of it) is a failed proof. */
async function checkProof(
  vc: Record<string, unknown>,
  loader: DocumentLoader,
): Promise<ProofVerification> {
  try {
    return await verifyCredentialProof(vc, loader);
  } catch (error) {
    return { verified: false, reason: (error as Error)?.message ?? 'the proof does not verify' };
  }
}

function verifierDocument(snapshot: CompiledSnapshot, did: string): Record<string, unknown> | null {
  const parsed = parseDid(did);
  if (parsed?.method !== 'svc') return null;
  return snapshot.tenants.get(parsed.tenantId)?.identity.verifierDocument ?? null;
}

function retiredKeyLoader(
  snapshot: CompiledSnapshot,
  issuer: CompiledIdentity,
  retired: CompiledRetiredKey,
): DocumentLoader {
  return createDocumentLoader((did) =>
    did === issuer.did ? retired.asCurrentKeyDocument : verifierDocument(snapshot, did),
  );
}

function proofMethod(vc: Record<string, unknown>): string | undefined {
  const proof = vc.proof;
  if (typeof proof !== 'object' || proof === null) return undefined;
  const method = (proof as { verificationMethod?: unknown }).verificationMethod;
  return typeof method === 'string' ? method : undefined;
}

/** The tenant whose CA key the proof names (did:svc), if it is in the snapshot. */
function signingTenant(
  snapshot: CompiledSnapshot,
  vc: Record<string, unknown>,
): CompiledIdentity | undefined {
  const method = proofMethod(vc);
  if (method === undefined || !method.startsWith('did:svc:')) return undefined;
  const hash = method.indexOf('#');
  const parsed = parseDid(hash === -1 ? method : method.slice(0, hash));
  if (parsed?.method !== 'svc') return undefined;
  return snapshot.tenants.get(parsed.tenantId)?.identity;
}
