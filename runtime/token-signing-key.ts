// The process's access-token signing key (DESIGN.md §6a): an Ed25519 private JWK in
// `<dataDir>/token-signing-key.jwk` (mode 0600), created on the first start and kept across
// restarts, so tokens minted before a restart still verify. Its public half is upserted into
// token_signing_keys (id = kid = RFC 7638 thumbprint) before the first snapshot is built, so the
// JWKS every data plane serves from its snapshot names it.
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { TokenSigningKeyMaterial } from '../data-plane/oauth/token-signer.js';
import { gatewayError } from '../shared/errors/index.js';
import type { Database } from '../storage/database.js';
import { writeSecretFile } from './secret-file.js';

export const TOKEN_SIGNING_KEY_FILE = 'token-signing-key.jwk';

/** A new Ed25519 key pair as JWKs, with its thumbprint as kid. */
export async function generateTokenSigningKey(): Promise<TokenSigningKeyMaterial> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return describeKey(privateKey.export({ format: 'jwk' }) as JWK);
}

/** Reads the key file of `dataDir`, or creates it (mode 0600) when there is none. */
export async function loadTokenSigningKey(dataDir: string): Promise<TokenSigningKeyMaterial> {
  const file = join(dataDir, TOKEN_SIGNING_KEY_FILE);
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unwritable(file, error);
  }
  if (text !== undefined) {
    let jwk: JWK;
    try {
      jwk = JSON.parse(text) as JWK;
    } catch {
      throw corrupt(file);
    }
    return describeKey(jwk, file);
  }
  const created = await generateTokenSigningKey();
  try {
    await writeSecretFile(file, JSON.stringify(created.privateJwk));
  } catch (error) {
    throw unwritable(file, error);
  }
  return created;
}

/** Publishes the public half: the next snapshot's JWKS lists it. */
export async function registerTokenSigningKey(
  db: Database,
  key: TokenSigningKeyMaterial,
): Promise<void> {
  await db.query(
    `insert into token_signing_keys (id, "publicJwk") values ($1, $2::jsonb)
     on conflict (id) do nothing`,
    [key.kid, JSON.stringify(key.publicJwk)],
  );
}

async function describeKey(jwk: JWK, file?: string): Promise<TokenSigningKeyMaterial> {
  if (
    typeof jwk !== 'object' ||
    jwk === null ||
    jwk.kty !== 'OKP' ||
    jwk.crv !== 'Ed25519' ||
    typeof jwk.x !== 'string' ||
    typeof jwk.d !== 'string'
  ) {
    throw corrupt(file ?? TOKEN_SIGNING_KEY_FILE);
  }
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  return { kid, publicJwk, privateJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } };
}

function unwritable(file: string, error: unknown) {
  return gatewayError(
    'STORAGE_DATA_DIR_UNWRITABLE',
    { what: 'the token signing key to', path: file, reason: (error as Error).message },
    { cause: error },
  );
}

function corrupt(file: string) {
  return gatewayError('CONFIG_INVALID', {
    setting: file,
    problem:
      'not a private Ed25519 JWK; restore it, or delete it to make a new key (tokens the old key signed then stop verifying)',
  });
}
