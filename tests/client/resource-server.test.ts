import fc from 'fast-check';
import { base64url, createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearerChallenge,
  bearerToken,
  GatewayTokenError,
  type GatewayTokenErrorCode,
  gatewayJwksUrl,
  requireGatewayToken,
  verifyGatewayAccessToken,
} from '../../client/src/resource-server.js';
import { propertyRuns } from '../support/property-runs.js';
import {
  createSigningKey,
  startTokenIssuer,
  type TokenIssuer,
  unreachableIssuer,
} from './token-issuer.js';

const SERVER_A = 'mcp://server-a';
const SERVER_B = 'mcp://server-b';

let gateway: TokenIssuer;

beforeAll(async () => {
  gateway = await startTokenIssuer();
});

afterAll(async () => {
  await gateway.close();
});

async function refusal(
  token: string | undefined,
  options: Partial<Parameters<typeof verifyGatewayAccessToken>[1]> = {},
): Promise<GatewayTokenError> {
  try {
    await verifyGatewayAccessToken(token, {
      issuer: gateway.issuer,
      resource: SERVER_A,
      ...options,
    });
  } catch (error) {
    if (error instanceof GatewayTokenError) return error;
    throw error;
  }
  throw new Error('the token was accepted');
}

async function refusedWith(
  token: string | undefined,
  code: GatewayTokenErrorCode,
  options: Partial<Parameters<typeof verifyGatewayAccessToken>[1]> = {},
): Promise<void> {
  const error = await refusal(token, options);
  expect({ code: error.code, message: error.message }).toMatchObject({ code });
}

function unsigned(header: object, claims: object, signature = ''): string {
  const part = (value: object) => base64url.encode(JSON.stringify(value));
  return `${part(header)}.${part(claims)}.${signature}`;
}

describe('verifyGatewayAccessToken', () => {
  it('returns the claims of a token minted for this resource', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await gateway.mint(SERVER_A, {
      claims: { iat: now, exp: now + 300, scope: 'tools:call tools:list' },
    });
    const claims = await verifyGatewayAccessToken(token, {
      issuer: gateway.issuer,
      resource: SERVER_A,
    });
    expect(claims).toEqual({
      iss: gateway.issuer,
      sub: 'agt_test-agent',
      aud: SERVER_A,
      client_id: 'gateway',
      iat: now,
      exp: now + 300,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      scope: 'tools:call tools:list',
      tenant_id: 'ten_test',
    });
  });

  it('fetches the JWKS from <issuer>/oauth/jwks once and reuses it for the same issuer', async () => {
    expect(gatewayJwksUrl(`${gateway.issuer}/`).href).toBe(`${gateway.issuer}/oauth/jwks`);
    const before = gateway.jwksFetches;
    for (let i = 0; i < 3; i++) {
      await verifyGatewayAccessToken(await gateway.mint(SERVER_A), {
        issuer: gateway.issuer,
        resource: SERVER_A,
      });
    }
    expect(gateway.jwksFetches - before).toBeLessThanOrEqual(1);
  });

  it('accepts typ application/at+jwt and an audience array naming only this resource', async () => {
    await expect(
      verifyGatewayAccessToken(
        await gateway.mint([SERVER_A], { header: { typ: 'application/at+jwt' } }),
        { issuer: gateway.issuer, resource: SERVER_A },
      ),
    ).resolves.toMatchObject({ aud: SERVER_A });
  });

  it('refuses alg none before looking up any key', async () => {
    const fetches = gateway.jwksFetches;
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: gateway.issuer,
      sub: 'agt_x',
      aud: SERVER_A,
      client_id: 'gateway',
      iat: now,
      exp: now + 300,
      jti: 'j',
    };
    for (const alg of ['none', 'None', 'NONE']) {
      await refusedWith(unsigned({ alg, typ: 'at+jwt' }, claims), 'TOKEN_ALGORITHM_REFUSED');
    }
    await refusedWith(unsigned({ typ: 'at+jwt' }, claims), 'TOKEN_MALFORMED');
    expect(gateway.jwksFetches).toBe(fetches);
  });

  it('refuses HS256 tokens "signed" with the public key as the HMAC secret', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: gateway.issuer,
      sub: 'agt_x',
      aud: SERVER_A,
      client_id: 'gateway',
      jti: 'j',
      iat: now,
      exp: now + 300,
    };
    const rawPublicKey = base64url.decode(gateway.key.publicJwk.x as string);
    const jwkText = new TextEncoder().encode(JSON.stringify(gateway.key.publicJwk));
    for (const secret of [rawPublicKey, jwkText]) {
      for (const alg of ['HS256', 'HS512']) {
        const token = await new SignJWT(claims)
          .setProtectedHeader({ alg, typ: 'at+jwt', kid: gateway.key.kid })
          .sign(secret);
        await refusedWith(token, 'TOKEN_ALGORITHM_REFUSED');
      }
    }
  });

  it('refuses every algorithm but EdDSA, the fully-specified Ed25519 name included', async () => {
    const token = await gateway.mint(SERVER_A, { header: { alg: 'Ed25519' } });
    await refusedWith(token, 'TOKEN_ALGORITHM_REFUSED');
  });

  it('refuses an expired token, within the clock tolerance only', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await gateway.mint(SERVER_A, { claims: { iat: now - 400, exp: now - 100 } });
    await refusedWith(expired, 'TOKEN_EXPIRED');

    const justExpired = await gateway.mint(SERVER_A, { claims: { iat: now - 310, exp: now - 10 } });
    await expect(
      verifyGatewayAccessToken(justExpired, { issuer: gateway.issuer, resource: SERVER_A }),
    ).resolves.toMatchObject({ exp: now - 10 });
    await refusedWith(justExpired, 'TOKEN_EXPIRED', { clockToleranceSeconds: 0 });
  });

  it('refuses a token whose nbf lies in the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    const early = await gateway.mint(SERVER_A, { claims: { nbf: now + 120 } });
    await refusedWith(early, 'TOKEN_NOT_YET_VALID');
  });

  it('refuses a token minted for server A presented at server B', async () => {
    const forA = await gateway.mint(SERVER_A);
    await refusedWith(forA, 'TOKEN_WRONG_AUDIENCE', { resource: SERVER_B });
    await refusedWith(forA, 'TOKEN_WRONG_AUDIENCE', { resource: `${gateway.issuer}/mcp/server-a` });
    await refusedWith(forA, 'TOKEN_WRONG_AUDIENCE', { resource: 'mcp://server-a/' });
  });

  it('refuses a token for several audiences, this one among them', async () => {
    await refusedWith(await gateway.mint([SERVER_A, SERVER_B]), 'TOKEN_WRONG_AUDIENCE');
    await refusedWith(await gateway.mint([SERVER_A, SERVER_A]), 'TOKEN_WRONG_AUDIENCE');
    await refusedWith(await gateway.mint([]), 'TOKEN_WRONG_AUDIENCE');
  });

  it('refuses a token from another issuer, even one signed by a trusted key', async () => {
    const token = await gateway.mint(SERVER_A, { claims: { iss: 'https://evil.example' } });
    await refusedWith(token, 'TOKEN_WRONG_ISSUER');
    const slash = await gateway.mint(SERVER_A, { claims: { iss: `${gateway.issuer}/` } });
    await refusedWith(slash, 'TOKEN_WRONG_ISSUER');
  });

  it('refuses a JWT that is not an access token (typ JWT or none)', async () => {
    await refusedWith(await gateway.mint(SERVER_A, { header: { typ: 'JWT' } }), 'TOKEN_WRONG_TYPE');
    await refusedWith(
      await gateway.mint(SERVER_A, { header: { typ: undefined } }),
      'TOKEN_WRONG_TYPE',
    );
  });

  it('refuses a token signed by a key the JWKS does not hold', async () => {
    const stranger = await createSigningKey();
    await refusedWith(await gateway.mint(SERVER_A, { key: stranger }), 'TOKEN_SIGNATURE_INVALID');
    // The trusted kid on a stranger's signature.
    const forged = await gateway.mint(SERVER_A, {
      key: { ...stranger, kid: gateway.key.kid },
    });
    await refusedWith(forged, 'TOKEN_SIGNATURE_INVALID');
    // A valid header and claims with an empty or foreign signature.
    const valid = await gateway.mint(SERVER_A);
    const [header, payload] = valid.split('.');
    await refusedWith(`${header}.${payload}.`, 'TOKEN_SIGNATURE_INVALID');
    const other = (await gateway.mint(SERVER_A)).split('.')[2];
    await refusedWith(`${header}.${payload}.${other}`, 'TOKEN_SIGNATURE_INVALID');
  });

  it('refuses a non-canonical spelling of a valid signature that jose alone accepts', async () => {
    const token = await gateway.mint(SERVER_A);
    const last = token.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) + 1] as string; // same top 2 bits
    const respelt = `${token.slice(0, -1)}${sibling}`;
    const keys = createLocalJWKSet({ keys: [gateway.key.publicJwk] });
    await expect(jwtVerify(respelt, keys)).resolves.toBeDefined();
    await refusedWith(respelt, 'TOKEN_SIGNATURE_INVALID');
  });

  it('refuses tokens missing a claim RFC 9068 requires, or with a claim of the wrong type', async () => {
    for (const claim of ['sub', 'client_id', 'iat', 'exp', 'jti']) {
      const error = await refusal(await gateway.mint(SERVER_A, { claims: { [claim]: undefined } }));
      expect([error.code, error.message]).toEqual(['TOKEN_MALFORMED', `missing "${claim}" claim`]);
    }
    for (const [claim, value] of [
      ['sub', 42],
      ['sub', ''],
      ['client_id', null],
      ['jti', ['a']],
      ['scope', 7],
      ['tenant_id', {}],
      ['exp', '9999999999'],
      ['iat', 'now'],
    ] as const) {
      const error = await refusal(await gateway.mint(SERVER_A, { claims: { [claim]: value } }));
      expect([claim, error.code]).toEqual([claim, 'TOKEN_MALFORMED']);
    }
  });

  it('says TOKEN_MISSING without a token and TOKEN_MALFORMED for garbage', async () => {
    await refusedWith(undefined, 'TOKEN_MISSING');
    await refusedWith('', 'TOKEN_MISSING');
    for (const garbage of ['abc', 'a.b', 'a.b.c.d', 'a..c', ' a.b.c', 'a.b.c ', 'a=.b.c']) {
      await refusedWith(garbage, 'TOKEN_MALFORMED');
    }
    await refusedWith(`${'a'.repeat(9000)}.b.c`, 'TOKEN_MALFORMED');
    const notJson = base64url.encode('{"alg":"EdDSA"');
    await refusedWith(`${notJson}.${base64url.encode('{}')}.AA`, 'TOKEN_MALFORMED');
  });

  it('says JWKS_UNREACHABLE (status 503) when the issuer keys cannot be fetched', async () => {
    const down = await unreachableIssuer();
    const token = await gateway.mint(SERVER_A, { claims: { iss: down } });
    const error = await refusal(token, { issuer: down });
    expect([error.code, error.status]).toEqual(['JWKS_UNREACHABLE', 503]);

    const failing = await startTokenIssuer();
    try {
      failing.failWith = 500;
      const error500 = await refusal(await failing.mint(SERVER_A), { issuer: failing.issuer });
      expect(error500.code).toBe('JWKS_UNREACHABLE');
    } finally {
      await failing.close();
    }
  });

  it('takes the keys from an explicit JWKS URL or key function instead', async () => {
    const other = await startTokenIssuer();
    try {
      const token = await other.mint(SERVER_A, { claims: { iss: 'https://gateway.example' } });
      const options = { issuer: 'https://gateway.example', resource: SERVER_A };
      await expect(
        verifyGatewayAccessToken(token, {
          ...options,
          jwks: new URL(`${other.issuer}/oauth/jwks`),
        }),
      ).resolves.toMatchObject({ iss: 'https://gateway.example' });
      await expect(
        verifyGatewayAccessToken(token, {
          ...options,
          jwks: createLocalJWKSet({ keys: [other.key.publicJwk] }),
        }),
      ).resolves.toMatchObject({ sub: 'agt_test-agent' });
      const error = await refusal(token, {
        ...options,
        jwks: createLocalJWKSet({ keys: [gateway.key.publicJwk] }),
      });
      expect(error.code).toBe('TOKEN_SIGNATURE_INVALID');
    } finally {
      await other.close();
    }
  });

  it('throws TypeError, not a token refusal, for bad options', async () => {
    const token = await gateway.mint(SERVER_A);
    for (const options of [
      { issuer: '', resource: SERVER_A },
      { issuer: gateway.issuer, resource: '' },
      { issuer: gateway.issuer, resource: SERVER_A, clockToleranceSeconds: -1 },
      { issuer: gateway.issuer, resource: SERVER_A, clockToleranceSeconds: Number.NaN },
    ]) {
      await expect(verifyGatewayAccessToken(token, options)).rejects.toBeInstanceOf(TypeError);
    }
    expect(() => requireGatewayToken({ issuer: gateway.issuer, resource: '' })).toThrow(TypeError);
  });

  it('never verifies any mutation of a valid token', async () => {
    const token = await gateway.mint(SERVER_A);
    const options = { issuer: gateway.issuer, resource: SERVER_A };
    await verifyGatewayAccessToken(token, options);
    const base64urlChar = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.='.split(''),
    );
    const position = fc.nat({ max: token.length - 1 });
    const mutation = fc.oneof(
      fc
        .tuple(position, base64urlChar)
        .map(([at, c]) => token.slice(0, at) + c + token.slice(at + 1)),
      fc.tuple(position, base64urlChar).map(([at, c]) => token.slice(0, at) + c + token.slice(at)),
      position.map((at) => token.slice(0, at) + token.slice(at + 1)),
      position.map((at) => token.slice(0, at)),
      fc
        .tuple(position, position)
        .map(([a, b]) => token.slice(0, Math.min(a, b)) + token.slice(Math.max(a, b))),
    );
    await fc.assert(
      fc.asyncProperty(mutation, async (mutated) => {
        fc.pre(mutated !== token);
        const outcome = await verifyGatewayAccessToken(mutated, options).then(
          () => 'accepted',
          (error: unknown) => (error instanceof GatewayTokenError ? 'refused' : String(error)),
        );
        expect(outcome).toBe('refused');
      }),
      { numRuns: propertyRuns(400) },
    );
  });
});

describe('bearerToken', () => {
  it('extracts the token of a Bearer Authorization header, scheme case-insensitive', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer  abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('BEARER a-b_c~d+e/f==')).toBe('a-b_c~d+e/f==');
  });

  it.each([
    [undefined, 'TOKEN_MISSING'],
    ['', 'TOKEN_MISSING'],
    ['Basic dXNlcjpwYXNz', 'TOKEN_MISSING'],
    ['Bearerabc', 'TOKEN_MISSING'],
    ['Bearer', 'TOKEN_MALFORMED'],
    ['Bearer ', 'TOKEN_MALFORMED'],
    ['Bearer a b', 'TOKEN_MALFORMED'],
    ['Bearer a,b', 'TOKEN_MALFORMED'],
    [['Bearer a', 'Bearer b'], 'TOKEN_MALFORMED'],
  ] as const)('refuses %j with %s', (header, code) => {
    try {
      bearerToken(header);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayTokenError);
      expect((error as GatewayTokenError).code).toBe(code);
      expect((error as GatewayTokenError).status).toBe(401);
    }
  });
});

describe('bearerChallenge', () => {
  const metadata = 'https://mcp.example/.well-known/oauth-protected-resource';

  it('names no error for a missing token (RFC 6750 §3.1), with the resource metadata URL', () => {
    const missing = new GatewayTokenError('TOKEN_MISSING', 'no bearer token');
    expect(bearerChallenge(missing, { resourceMetadata: metadata })).toBe(
      `Bearer resource_metadata="${metadata}"`,
    );
    expect(bearerChallenge(missing)).toBe('Bearer');
  });

  it('names invalid_token for a refused token', () => {
    const expired = new GatewayTokenError('TOKEN_EXPIRED', 'token expired');
    expect(bearerChallenge(expired, { resourceMetadata: metadata })).toBe(
      `Bearer error="invalid_token", error_description="token expired", resource_metadata="${metadata}"`,
    );
  });
});
