// Verifies an access token this gateway issued, as introspection and revocation need it: the
// signature against the snapshot's JWKS (by kid), EdDSA only, typ at+jwt, our issuer, not
// expired, and the RFC 9068 claims present. Any failure is `undefined`: these endpoints answer an
// invalid token as inactive (RFC 7662) or ignore it (RFC 7009), never with an error.
import { decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import type { OAuthIndex } from './oauth-index.js';

export interface VerifiedAccessToken extends JWTPayload {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
  readonly exp: number;
  readonly iat: number;
  readonly jti: string;
  readonly client_id: string;
  readonly tenant_id: string;
  readonly scope: string;
}

export async function verifyAccessToken(
  index: OAuthIndex,
  token: string,
  issuer: string,
): Promise<VerifiedAccessToken | undefined> {
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = kid === undefined ? undefined : index.keys.get(kid);
    if (!key) return undefined;
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
      issuer,
      requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti'],
    });
    const { sub, aud, jti, client_id, tenant_id, scope } = payload;
    if (
      typeof sub !== 'string' ||
      typeof aud !== 'string' ||
      typeof jti !== 'string' ||
      typeof client_id !== 'string' ||
      typeof tenant_id !== 'string'
    ) {
      return undefined;
    }
    return { ...payload, scope: typeof scope === 'string' ? scope : '' } as VerifiedAccessToken;
  } catch {
    return undefined;
  }
}
