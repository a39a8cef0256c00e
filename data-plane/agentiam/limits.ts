// Bounds of what an agent may present as identity, on inspect and on delegation verify: they keep
// JSON-LD canonicalization (milliseconds per credential) and the chain walk bounded whatever is
// sent. A tenant's maxDelegationDepth is checked by the chain rules; this is the wire limit.

/** Most delegation links a body may carry (the depth rule decides below it). */
export const MAX_CHAIN_LINKS = 32;
/** Largest delegation-verify body: 33 credentials of a few KiB each fit many times. */
export const VERIFY_BODY_LIMIT_BYTES = 256 * 1024;
/** Largest credential (its JSON text) whose proof is checked; a bigger one fails unverified. */
export const MAX_CREDENTIAL_JSON_BYTES = 64 * 1024;
