// `chainFor`: what a sub-agent presents, its delegation chain, assembled from the credential or
// presentation its delegator held and the link made for it. Pure: no key, no signature check
// (the gateway verifies signatures); it refuses only a link that does not continue the chain.
import { type AgentCredential, subjectOf } from './credential.js';
import { DelegationError } from './errors.js';

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
