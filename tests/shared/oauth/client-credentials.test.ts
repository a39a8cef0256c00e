// Client ids, secrets and their hashes (shared/oauth/client-credentials.ts), and the RFC error
// strings of the OAUTH_* codes (shared/oauth/errors.ts).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../shared/errors/index.js';
import {
  generateClientId,
  generateClientSecret,
  hashClientSecret,
  isClientId,
  isClientSecret,
  verifyClientSecret,
} from '../../../shared/oauth/client-credentials.js';
import {
  buildOAuthErrorBody,
  isOAuthErrorCode,
  OAUTH_ERROR_STRINGS,
} from '../../../shared/oauth/errors.js';

describe('client ids and secrets', () => {
  it('a client id is agc_ and 22 base64url characters (128 bits); a secret 43 (256 bits)', () => {
    const ids = new Set(Array.from({ length: 200 }, generateClientId));
    expect(ids.size).toBe(200);
    for (const id of ids) {
      expect(id).toMatch(/^agc_[A-Za-z0-9_-]{22}$/);
      expect(isClientId(id)).toBe(true);
      expect(Buffer.from(id.slice(4), 'base64url')).toHaveLength(16);
    }
    const { secret, secretHash } = generateClientSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(isClientSecret(secret)).toBe(true);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(secretHash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hashClientSecret(secret)).toBe(secretHash);
  });

  it('verifies a secret against its hash, and nothing else', () => {
    const { secret, secretHash } = generateClientSecret();
    expect(verifyClientSecret(secret, secretHash)).toBe(true);
    expect(verifyClientSecret(`${secret.slice(0, -1)}A`, secretHash)).toBe(secret.endsWith('A'));
    expect(verifyClientSecret('', secretHash)).toBe(false);
    expect(verifyClientSecret(secret, 'abc')).toBe(false);
    expect(verifyClientSecret(secret, '')).toBe(false);
  });

  it.each([undefined, 42, '', 'agc_short', `agk_${'a'.repeat(22)}`, `agc_${'a'.repeat(21)}+`])(
    'refuses %s as a client id',
    (value) => {
      expect(isClientId(value)).toBe(false);
    },
  );
});

describe('RFC error strings', () => {
  it('names every OAUTH_* code of the registry, and only those', () => {
    const codes = Object.keys(ERROR_CODES).filter((code) => code.startsWith('OAUTH_'));
    expect(Object.keys(OAUTH_ERROR_STRINGS).sort()).toEqual(codes.sort());
    expect(OAUTH_ERROR_STRINGS).toEqual({
      OAUTH_INVALID_REQUEST: 'invalid_request',
      OAUTH_INVALID_CLIENT: 'invalid_client',
      OAUTH_INVALID_GRANT: 'invalid_grant',
      OAUTH_INVALID_TARGET: 'invalid_target',
      OAUTH_UNSUPPORTED_GRANT_TYPE: 'unsupported_grant_type',
      OAUTH_UNAUTHORIZED_CLIENT: 'unauthorized_client',
      OAUTH_TOKEN_OF_ANOTHER_CLIENT: 'unauthorized_client',
      OAUTH_RATE_LIMITED: 'temporarily_unavailable',
    });
    expect(isOAuthErrorCode('OAUTH_INVALID_CLIENT')).toBe(true);
    expect(isOAuthErrorCode('REQUEST_INVALID')).toBe(false);
    expect(isOAuthErrorCode('toString')).toBe(false);
  });

  it('builds { error, error_description }; a registration refusal keeps its RFC 7591 string', () => {
    expect(buildOAuthErrorBody('OAUTH_INVALID_TARGET', 'resource x: unknown')).toEqual({
      error: 'invalid_target',
      error_description: 'resource x: unknown',
    });
    expect(
      buildOAuthErrorBody('OAUTH_INVALID_REQUEST', 'redirect_uris.0: …', {
        oauthError: 'invalid_redirect_uri',
      }),
    ).toEqual({ error: 'invalid_redirect_uri', error_description: 'redirect_uris.0: …' });
    expect(
      buildOAuthErrorBody('OAUTH_INVALID_REQUEST', 'x', { oauthError: 'something_else' }),
    ).toEqual({ error: 'invalid_request', error_description: 'x' });
  });
});
