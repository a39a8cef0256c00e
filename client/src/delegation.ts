// `@agent-gateway/client/delegation`: an agent hands a subset of its tools to another agent by
// signing an AgentDelegationCredential with its own key (the gateway never holds it), and a
// sub-agent presents the chain that ends at it. This entry only names the subpath's exports; one
// job per module in delegation/: signing a link (delegate.ts), assembling the presentation
// (chain.ts), the offline JSON-LD loader signatures are made and checked with
// (document-loader.ts), the delegator's key (keys.ts), the credential's shape (credential.ts)
// and the errors (errors.ts).
//
// The public types are the package's own: no type of the untyped Digital Bazaar libraries
// reaches a consumer's declarations.
export { chainFor, type DelegationPresentation } from './delegation/chain.js';
export {
  type AgentCredential,
  type AgentDelegationCredential,
  DELEGATION_CREDENTIAL_TYPE,
} from './delegation/credential.js';
export {
  type DelegateOptions,
  delegate,
  MAX_DELEGATION_TTL_SECONDS,
  MIN_DELEGATION_TTL_SECONDS,
} from './delegation/delegate.js';
export { type OfflineDocumentLoader, offlineDocumentLoader } from './delegation/document-loader.js';
export {
  DELEGATION_ERROR_CODES,
  DelegationError,
  type DelegationErrorCode,
} from './delegation/errors.js';
export type { Ed25519PrivateJwk, PrivateJwkInput } from './delegation/keys.js';
