// Identity on a call (spec §5.5, DESIGN.md §6): the agent presents its credential (for a delegate,
// the root credential and the delegation links to it) in the body and proves possession of the
// key the credential names with an Agent-Proof header: a compact JWS over this request's method,
// URL and exact body bytes, fresh (60 s) and used once. A credential alone is public data and
// proves nothing.
//
// Checked after the agent is found and not killed, before the mode check, when the tenant's
// gateway policy requires identity — and whenever a call presents any part of one (credential,
// chain or proof): a presented identity is verified and, if bad, denied exactly as if it were
// required, never silently ignored, because NPL conditions on `delegation.*` must only ever see
// a verified chain. A half identity (a credential without a proof, a proof or chain without a
// credential) is AGENT_IDENTITY_REQUIRED.
//
// Order, cheapest first: the proof is checked against the calling agent's registered key (a JWS
// verification) and its jti claimed, then the chain (proof checks cached by credential digest),
// then that the chain ends at the calling agent.
import type { FastifyRequest } from 'fastify';
import { verifyAgentProof } from '../../shared/agentiam/proof-of-possession.js';
import { type ErrorCode, formatErrorMessage } from '../../shared/errors/index.js';
import type { CompiledAgent } from '../store/compiled-snapshot.js';
import type { InspectDependencies } from './dependencies.js';
import type { Block } from './exchange.js';
import type { InspectRequest } from './request.js';

export const AGENT_PROOF_HEADER = 'agent-proof';

/** What NPL conditions see as `delegation`: the verified chain, or none. */
export interface CallDelegation {
  readonly depth: number;
  /** Agent ids from the root credential's agent to the caller. */
  readonly chain: readonly string[];
}

export const NO_DELEGATION: CallDelegation = Object.freeze({
  depth: 0,
  chain: Object.freeze([]) as readonly string[],
});

export type IdentityOutcome =
  | { readonly ok: true; readonly delegation: CallDelegation }
  | ({ readonly ok: false } & Block);

/** True when the call must go through the identity check. */
export function needsIdentityCheck(
  requireAgentIdentity: boolean,
  call: InspectRequest,
  request: FastifyRequest,
): boolean {
  return (
    requireAgentIdentity ||
    call.agentCredential !== undefined ||
    call.delegationChain !== undefined ||
    request.headers[AGENT_PROOF_HEADER] !== undefined
  );
}

export async function verifyCallIdentity(
  deps: Pick<InspectDependencies, 'identity' | 'publicUrl'>,
  request: FastifyRequest,
  call: InspectRequest,
  agent: CompiledAgent,
  inspectPath: string,
): Promise<IdentityOutcome> {
  const proof = request.headers[AGENT_PROOF_HEADER];
  const credential = call.agentCredential;
  if (credential === undefined || proof === undefined) {
    const missing =
      credential === undefined && proof === undefined
        ? 'agent_credential and the Agent-Proof header are missing'
        : credential === undefined
          ? 'agent_credential is missing'
          : 'the Agent-Proof header is missing';
    return deny(
      'AGENT_IDENTITY_REQUIRED',
      formatErrorMessage('AGENT_IDENTITY_REQUIRED', { missing }),
    );
  }
  if (typeof proof !== 'string') {
    return deny(
      'AGENT_PROOF_INVALID',
      formatErrorMessage('AGENT_PROOF_INVALID', { problem: 'more than one Agent-Proof header' }),
    );
  }
  const now = new Date();
  const checked = await verifyAgentProof(proof, {
    publicKeyMultibase: agent.publicKey,
    htm: 'POST',
    htu: `${deps.publicUrl.get()}${inspectPath}`,
    body: request.rawBody ?? EMPTY_BODY,
    now,
  });
  if (!checked.ok) return deny(checked.code, checked.message);
  const claim = deps.identity.replays.claim(
    agent.publicKey,
    checked.jti,
    checked.iat,
    now.getTime(),
  );
  if (claim === 'replayed') {
    return deny(
      'AGENT_PROOF_REPLAYED',
      formatErrorMessage('AGENT_PROOF_REPLAYED', { jti: checked.jti }),
    );
  }
  if (claim === 'full') {
    // More live proofs than the store holds: refused rather than risk accepting a replay.
    return deny(
      'AGENT_PROOF_CAPACITY',
      formatErrorMessage('AGENT_PROOF_CAPACITY', {
        limit: deps.identity.replays.capacity,
        jti: checked.jti,
      }),
    );
  }
  const { snapshot, tenant } = request.auth!;
  const result = await deps.identity.verifyChain(
    snapshot,
    tenant,
    { rootCredential: credential, chain: call.delegationChain ?? [], requestedTool: call.toolName },
    'inspect',
    now,
  );
  if (result.failure !== null) return deny(result.failure.code, result.failure.message);
  if (!result.valid || result.agentId !== agent.id) {
    return deny(
      'AGENT_IDENTITY_MISMATCH',
      formatErrorMessage('AGENT_IDENTITY_MISMATCH', {
        credentialAgentId: String(result.agentId),
        agentId: agent.id,
      }),
    );
  }
  return { ok: true, delegation: { depth: result.depth, chain: result.chain } };
}

const EMPTY_BODY = new Uint8Array(0);

function deny(code: ErrorCode, message: string): IdentityOutcome {
  return { ok: false, code, message };
}
