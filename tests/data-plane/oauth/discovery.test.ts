import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';

describe('OAuth discovery and JWKS (public, cacheable)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway('pglite');
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('GET /.well-known/oauth-authorization-server answers the RFC 8414 metadata of this slice', async () => {
    const response = await fetch(`${gateway.url}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const issuer = gateway.url;
    expect(await response.json()).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      jwks_uri: `${issuer}/oauth/jwks`,
      registration_endpoint: `${issuer}/oauth/register`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      grant_types_supported: ['client_credentials', 'authorization_code'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: [],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ],
      client_id_metadata_document_supported: true,
      token_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
      introspection_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      introspection_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: ['EdDSA'],
    });
  });

  it('GET /oauth/jwks serves the signing key the snapshot names, and nothing private', async () => {
    const response = await fetch(`${gateway.url}/oauth/jwks`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const signer = gateway.runtime.tokenSigner!;
    expect(gateway.runtime.store.current?.served.tokenSigningKeys.map((k) => k.kid)).toEqual([
      signer.kid,
    ]);
    expect(await response.json()).toEqual({
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: signer.publicJwk.x,
          kid: signer.kid,
          use: 'sig',
          alg: 'EdDSA',
        },
      ],
    });
  });
});
