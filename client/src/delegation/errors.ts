// The delegation helpers' errors: a closed set of codes, each naming the rule the gateway's chain
// verifier would break, so a link refused here is one the gateway would have refused too.

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
