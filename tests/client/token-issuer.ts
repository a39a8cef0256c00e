// A stand-in for the gateway's token side in the verifier tests: an Ed25519 key pair, a JWKS
// served over real HTTP at `<issuer>/oauth/jwks` (node:http, 127.0.0.1, random port), and a
// minting function for RFC 9068 tokens that any test can bend (header, claims, key).
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function createSigningKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' } };
}

export interface TokenIssuer {
  readonly issuer: string;
  readonly key: SigningKey;
  /** The keys the JWKS serves; tests may replace them. */
  keys: JWK[];
  /** When set, the JWKS answers with this status and no key set. */
  failWith: number | undefined;
  /** How many times the JWKS was fetched. */
  readonly jwksFetches: number;
  /**
   * A token for `resource` signed with the issuer's key (or `options.key`). `claims` and `header`
   * override the defaults; an `undefined` value removes the claim.
   */
  mint(
    resource: string | string[],
    options?: {
      readonly claims?: Record<string, unknown>;
      readonly header?: Record<string, unknown>;
      readonly key?: SigningKey;
    },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startTokenIssuer(): Promise<TokenIssuer> {
  const key = await createSigningKey();
  let jwksFetches = 0;
  const http: Server = createServer((req, res) => {
    if (req.url !== '/oauth/jwks') {
      res.writeHead(404).end();
      return;
    }
    jwksFetches++;
    if (state.failWith !== undefined) {
      res.writeHead(state.failWith, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const state: TokenIssuer = {
    issuer,
    key,
    keys: [key.publicJwk],
    failWith: undefined,
    get jwksFetches() {
      return jwksFetches;
    },
    async mint(resource, options = {}) {
      const signer = options.key ?? key;
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = {
        iss: issuer,
        sub: 'agt_test-agent',
        aud: resource,
        client_id: 'gateway',
        iat: now,
        exp: now + 300,
        jti: randomUUID(),
        scope: '',
        tenant_id: 'ten_test',
        ...options.claims,
      };
      for (const [name, value] of Object.entries(claims)) {
        if (value === undefined) delete claims[name];
      }
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: signer.kid, ...options.header })
        .sign(signer.privateKey);
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  return state;
}

/** A base URL nothing listens on (a port just released). */
export async function unreachableIssuer(): Promise<string> {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  await new Promise<void>((resolve) => http.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
