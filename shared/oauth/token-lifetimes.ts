// How long the gateway's access tokens live, and so how long a retired token signing key must stay
// in the JWKS: every data plane verifies a token by its kid, so a key leaves the JWKS only once the
// last token it signed has expired (`agent-gateway token-key rotate`, docs/oauth.md).

/** Longest lifetime of any access token (spec §8). */
export const MAX_TOKEN_LIFETIME_SECONDS = 900;

/**
 * A running process stops signing with a retired key when it applies the snapshot that retires
 * it (about a second after the rotation; longer while its configuration stream reconnects): the
 * allowance on top of the longest token lifetime, which also absorbs clock skew between hosts.
 */
export const TOKEN_KEY_SWITCH_ALLOWANCE_SECONDS = 60;

/** A retired key is served in the JWKS until retiredAt + this many seconds. */
export const RETIRED_TOKEN_KEY_RETENTION_SECONDS =
  MAX_TOKEN_LIFETIME_SECONDS + TOKEN_KEY_SWITCH_ALLOWANCE_SECONDS;
