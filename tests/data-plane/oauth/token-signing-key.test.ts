import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfigSnapshot } from '../../../control-plane/snapshot/build-snapshot.js';
import { TokenSigner } from '../../../data-plane/oauth/token-signer.js';
import {
  generateTokenSigningKey,
  loadTokenSigningKey,
  registerTokenSigningKey,
  TOKEN_SIGNING_KEY_FILE,
} from '../../../runtime/token-signing-key.js';
import { PublicUrl } from '../../../shared/public-url.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../../support/databases.js';

describe('the token signing key file', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('is created on the first start with mode 0600 and reused on the next', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ag-tsk-'));
    const first = await loadTokenSigningKey(join(dir, 'data'));
    const file = join(dir, 'data', TOKEN_SIGNING_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await loadTokenSigningKey(join(dir, 'data'));
    expect(again.kid).toBe(first.kid);
    expect(first.kid).toBe(await calculateJwkThumbprint(first.publicJwk, 'sha256'));
    expect(first.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: expect.any(String) });
    expect(first.privateJwk.d).toEqual(expect.any(String));
  });
});

describe('a corrupt token signing key file', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it.each([
    ['not JSON', 'not json'],
    ['a public key only', JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'abc' })],
    ['another key type', JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' })],
  ])('stops the start with CONFIG_INVALID: %s', async (_name, content) => {
    dir = await mkdtemp(join(tmpdir(), 'ag-tsk-'));
    await writeFile(join(dir, TOKEN_SIGNING_KEY_FILE), content);
    await expect(loadTokenSigningKey(dir)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining(TOKEN_SIGNING_KEY_FILE),
    });
  });
});

describe('TokenSigner', () => {
  it('signs RFC 9068 access tokens that verify with the public JWK', async () => {
    const key = await generateTokenSigningKey();
    const signer = await TokenSigner.create(key, new PublicUrl('https://gw.example'));
    const minted = await signer.mint(
      { sub: 'agent-1', aud: 'mcp://files', clientId: 'gateway', tenantId: 't1', scope: '' },
      300,
    );
    expect(decodeProtectedHeader(minted.token)).toEqual({
      alg: 'EdDSA',
      typ: 'at+jwt',
      kid: key.kid,
    });
    const { payload } = await jwtVerify(minted.token, await importJWK(key.publicJwk, 'EdDSA'), {
      issuer: 'https://gw.example',
      audience: 'mcp://files',
      typ: 'at+jwt',
      algorithms: ['EdDSA'],
    });
    expect(payload).toEqual({
      iss: 'https://gw.example',
      sub: 'agent-1',
      aud: 'mcp://files',
      client_id: 'gateway',
      tenant_id: 't1',
      scope: '',
      iat: minted.issuedAt,
      exp: minted.issuedAt + 300,
      jti: minted.jti,
    });
  });

  it('never signs a lifetime above 900 s', async () => {
    const signer = await TokenSigner.create(
      await generateTokenSigningKey(),
      new PublicUrl('https://gw.example'),
    );
    const minted = await signer.mint(
      { sub: 'a', aud: 'mcp://x', clientId: 'c', tenantId: 't', scope: '' },
      10_000,
    );
    expect(minted.expiresAt - minted.issuedAt).toBe(900);
  });
});

describeEachDatabase('the token signing key in the snapshot', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('is listed in tokenSigningKeys once registered (registering twice is harmless)', async () => {
    t = await createTestDatabase(kind);
    const key = await generateTokenSigningKey();
    await registerTokenSigningKey(t.db, key);
    await registerTokenSigningKey(t.db, key);
    const snapshot = await buildConfigSnapshot(t.db, 1);
    expect(snapshot.tokenSigningKeys).toEqual([{ kid: key.kid, publicJwk: key.publicJwk }]);
  });
});
