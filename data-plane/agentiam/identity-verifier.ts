// The data plane's AgentIAM verifier: delegation chains (the verify route and identity on inspect)
// checked by the shared chain rules (shared/agentiam/delegation-chain.ts) against the caller's
// tenant in the compiled snapshot — its CA as the only trusted issuer, its decoded status lists,
// its registered agents — with proofs checked through the cache (proof-verifier.ts), and the
// single-use store of Agent-Proof jtis (replay-guard.ts). One instance per data plane.
//
// The rules' dependencies are built once per (snapshot, tenant), not per request: a request only
// looks them up.
import { type ChainResult, verifyDelegationChain } from '../../shared/agentiam/delegation-chain.js';
import { isBitSet } from '../../shared/agentiam/status-list.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { CompiledSnapshot, CompiledTenant } from '../store/compiled-snapshot.js';
import { ProofVerifier } from './proof-verifier.js';
import { ReplayGuard } from './replay-guard.js';

export interface IdentityVerifierOptions {
  readonly metrics: GatewayMetrics;
  /** Proof checks kept (default 10 000). */
  readonly proofCacheSize?: number | undefined;
  /** Agent-Proof jtis remembered at once (default 500 000). */
  readonly replayCapacity?: number | undefined;
  /**
   * Told of every chain verified, after the verdict (delegation-links.ts records the links):
   * synchronous and never throwing, so it cannot slow or fail a verification.
   */
  readonly onChainVerified?:
    | ((tenantId: string, chain: readonly unknown[], result: ChainResult) => void)
    | undefined;
}

export interface ChainInput {
  readonly rootCredential: unknown;
  readonly chain: readonly unknown[];
  readonly requestedTool: string;
}

/** Where a chain verification came from, for the metrics. */
export type VerificationSource = 'verify' | 'inspect';

type ChainDependencies = Parameters<typeof verifyDelegationChain>[1];
type Counter = ReturnType<GatewayMetrics['chainVerifications']['labels']>;

export class IdentityVerifier {
  readonly proofs: ProofVerifier;
  readonly replays: ReplayGuard;
  readonly #dependencies = new WeakMap<CompiledSnapshot, Map<string, ChainDependencies>>();
  readonly #counters: Record<VerificationSource, Record<'valid' | 'invalid', Counter>>;
  readonly #onChainVerified: IdentityVerifierOptions['onChainVerified'];

  constructor(options: IdentityVerifierOptions) {
    this.proofs = new ProofVerifier({
      metrics: options.metrics,
      cacheSize: options.proofCacheSize,
    });
    this.replays = new ReplayGuard({ capacity: options.replayCapacity });
    this.#onChainVerified = options.onChainVerified;
    const counter = (source: string, result: string) =>
      options.metrics.chainVerifications.labels({ source, result });
    this.#counters = {
      verify: { valid: counter('verify', 'valid'), invalid: counter('verify', 'invalid') },
      inspect: { valid: counter('inspect', 'valid'), invalid: counter('inspect', 'invalid') },
    };
  }

  /** Verifies a root credential and its delegation links for `tenant` (the API key's). */
  async verifyChain(
    snapshot: CompiledSnapshot,
    tenant: CompiledTenant,
    input: ChainInput,
    source: VerificationSource,
    now = new Date(),
  ): Promise<ChainResult> {
    const result = await verifyDelegationChain(
      {
        tenantId: tenant.id,
        rootCredential: input.rootCredential,
        chain: input.chain,
        requestedTool: input.requestedTool,
        maxDepth: tenant.policy.maxDelegationDepth,
        now,
      },
      this.#dependenciesOf(snapshot, tenant),
    );
    this.#counters[source][result.valid ? 'valid' : 'invalid'].inc();
    this.#onChainVerified?.(tenant.id, input.chain, result);
    return result;
  }

  #dependenciesOf(snapshot: CompiledSnapshot, tenant: CompiledTenant): ChainDependencies {
    let byTenant = this.#dependencies.get(snapshot);
    if (byTenant === undefined) {
      byTenant = new Map();
      this.#dependencies.set(snapshot, byTenant);
    }
    let dependencies = byTenant.get(tenant.id);
    if (dependencies === undefined) {
      dependencies = chainDependencies(this.proofs, snapshot, tenant);
      byTenant.set(tenant.id, dependencies);
    }
    return dependencies;
  }
}

function chainDependencies(
  proofs: ProofVerifier,
  snapshot: CompiledSnapshot,
  tenant: CompiledTenant,
): ChainDependencies {
  const { did, statusLists } = tenant.identity;
  const { kills } = snapshot;
  return {
    verifyProof: (vc) => proofs.verify(snapshot, vc),
    trustedIssuer: (issuer) => issuer === did,
    // Only the tenant's own lists count: a list of another tenant, or one this snapshot does not
    // carry, is unknown (null), which the rules treat as revoked. A list re-signed by a kill
    // since the snapshot (the store's kill overlay) counts over the snapshot's older version.
    isRevoked: ({ statusListCredential, statusListIndex }) => {
      const own = statusLists.get(statusListCredential);
      if (own === undefined) return null;
      const list = kills.statusListByUrl(statusListCredential, own) ?? own;
      if (
        !Number.isSafeInteger(statusListIndex) ||
        statusListIndex < 0 ||
        statusListIndex >= list.bits.length * 8
      ) {
        return null;
      }
      return isBitSet(list.bits, statusListIndex);
    },
    agent: (agentId) => {
      const agent = tenant.agents.get(agentId);
      return agent
        ? { publicKey: agent.publicKey, status: agent.killed ? 'killed' : 'active' }
        : null;
    },
  };
}
