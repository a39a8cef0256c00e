// An Agent-Proof is a standard compact JWS (EdDSA, RFC 8037) that an independent Ed25519 verifier
// accepts, bound to one request: method, URL, body digest, a 60-second window around iat and a
// jti. Each way a proof can be wrong is refused with its own code and a precise problem, and no
// change to a proof's text ever verifies.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
} from 'node:crypto';
import fc from 'fast-check';
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Ed25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import {
  bodyDigest,
  createAgentProof,
  verifyAgentProof,
} from '../../../shared/agentiam/proof-of-possession.js';
import {
  decodeEd25519PublicKey,
  encodeEd25519PublicKey,
} from '../../../shared/identity/ed25519-multibase.js';
import { propertyRuns } from '../../support/property-runs.js';

function keyFromJwk(jwk: { x?: string; d?: string }): Ed25519KeyMaterial {
  return {
    publicKeyMultibase: encodeEd25519PublicKey(Buffer.from(jwk.x as string, 'base64url')),
    secretKey: Buffer.from(jwk.d as string, 'base64url'),
  };
}

function generateKey(): Ed25519KeyMaterial {
  return keyFromJwk(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));
}

/** The private JWK of key material: x from the z6Mk, d the seed. */
function jwkOf(key: Ed25519KeyMaterial) {
  const x = decodeEd25519PublicKey(key.publicKeyMultibase) as Uint8Array;
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: Buffer.from(x).toString('base64url'),
    d: Buffer.from(key.secretKey).toString('base64url'),
  };
}

/** An independent verifier: node:crypto Ed25519 over the JWS signing input. */
function verifiesWith(x: string, jws: string): boolean {
  const [header, payload, signature] = jws.split('.') as [string, string, string];
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  return verify(
    null,
    Buffer.from(`${header}.${payload}`),
    publicKey,
    Buffer.from(signature, 'base64url'),
  );
}

const AGENT = generateKey();
const OTHER = generateKey();
const HTU = 'https://gateway.example/api/v1/mcp/gateway/inspect';
const BODY = Buffer.from('{"tool":"search","arguments":{"q":"caf\u00e9"}}', 'utf8');
const NOW = new Date('2026-11-24T12:00:00.000Z');
const IAT = NOW.getTime() / 1000;

const expected = {
  publicKeyMultibase: AGENT.publicKeyMultibase,
  htm: 'POST',
  htu: HTU,
  body: BODY,
  now: NOW,
};

function kidOf(z6Mk: string): string {
  return `did:key:${z6Mk}#${z6Mk}`;
}

/**
 * A JWS of any header and payload text, signed by `key` with node:crypto (proofs createAgentProof
 * never makes, and which jose would refuse to sign).
 */
async function signBytes(
  header: Record<string, unknown>,
  payload: string,
  key: Ed25519KeyMaterial = AGENT,
): Promise<string> {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  const privateKey = createPrivateKey({ key: jwkOf(key), format: 'jwk' });
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
}

function signRaw(
  header: Record<string, unknown>,
  payload: unknown,
  key: Ed25519KeyMaterial = AGENT,
): Promise<string> {
  return signBytes(header, JSON.stringify(payload), key);
}

const HEADER = { alg: 'EdDSA', typ: 'agent-proof+jwt', kid: kidOf(AGENT.publicKeyMultibase) };
const PAYLOAD = {
  htm: 'POST',
  htu: HTU,
  body_sha256: bodyDigest(BODY),
  iat: IAT,
  jti: 'proof-1',
};

describe('createAgentProof', () => {
  it('makes a compact EdDSA JWS an independent Ed25519 verifier accepts', async () => {
    const jws = await createAgentProof({
      key: AGENT,
      htm: 'POST',
      htu: HTU,
      body: BODY,
      now: NOW,
      jti: 'j-1',
    });
    const [header, payload] = jws.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual(HEADER);
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toEqual({
      htm: 'POST',
      htu: HTU,
      body_sha256: createHash('sha256').update(BODY).digest('base64url'),
      iat: IAT,
      jti: 'j-1',
    });
    expect(verifiesWith(jwkOf(AGENT).x, jws)).toBe(true);
    expect(verifiesWith(jwkOf(OTHER).x, jws)).toBe(false);
  });

  it('signs with the RFC 8037 example key so that its published public key verifies', async () => {
    // RFC 8037 appendix A.1/A.2: the Ed25519 private key d and its public key x.
    const key = keyFromJwk({
      d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A',
      x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
    });
    const jws = await createAgentProof({ key, htm: 'POST', htu: HTU, body: BODY, now: NOW });
    expect(verifiesWith('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', jws)).toBe(true);
  });

  it('takes a string body as its UTF-8 bytes and makes a fresh jti by default', async () => {
    const first = await createAgentProof({
      key: AGENT,
      htm: 'POST',
      htu: HTU,
      body: BODY.toString(),
    });
    const second = await createAgentProof({ key: AGENT, htm: 'POST', htu: HTU, body: BODY });
    const now = new Date();
    const one = await verifyAgentProof(first, { ...expected, now });
    const two = await verifyAgentProof(second, { ...expected, now });
    expect(one.ok && two.ok && one.jti !== two.jti).toBe(true);
  });
});

describe('verifyAgentProof', () => {
  it('accepts a proof for this request, returning its jti and iat', async () => {
    const jws = await createAgentProof({
      key: AGENT,
      htm: 'POST',
      htu: HTU,
      body: BODY,
      now: NOW,
      jti: 'abc',
    });
    expect(await verifyAgentProof(jws, expected)).toEqual({ ok: true, jti: 'abc', iat: IAT });
  });

  it.each([
    ['60 s before iat', -60, true],
    ['60 s after iat', 60, true],
    ['61 s before iat', -61, false],
    ['61 s after iat', 61, false],
  ])('with the clock %s: accepted %s', async (_name, offset, accepted) => {
    const jws = await signRaw(HEADER, PAYLOAD);
    const result = await verifyAgentProof(jws, {
      ...expected,
      now: new Date(NOW.getTime() + offset * 1000),
    });
    if (accepted) {
      expect(result.ok).toBe(true);
    } else {
      expect(result).toEqual({
        ok: false,
        code: 'AGENT_PROOF_EXPIRED',
        message: `agent proof iat ${IAT} is outside the accepted window of 60 s`,
      });
    }
  });

  const refusals: ReadonlyArray<[string, () => Promise<string>, string]> = [
    ['not a JWS', async () => 'not-a-jws', 'not a compact JWS'],
    ['empty', async () => '', 'not a compact JWS'],
    ['too long', async () => `${'a'.repeat(5000)}.b.c`, 'not a compact JWS'],
    ['a JSON serialization', async () => JSON.stringify({ payload: 'x' }), 'not a compact JWS'],
    [
      'unsigned (alg none)',
      async () =>
        `${Buffer.from(JSON.stringify({ ...HEADER, alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(PAYLOAD)).toString('base64url')}.`,
      'the signature is not 64 bytes',
    ],
    [
      'a header that is not JSON',
      async () => `bm90IGpzb24.${(await signRaw(HEADER, PAYLOAD)).split('.').slice(1).join('.')}`,
      'the protected header is not base64url JSON',
    ],
    [
      'another alg',
      async () => {
        const [, payload, signature] = (await signRaw(HEADER, PAYLOAD)).split('.');
        const header = Buffer.from(JSON.stringify({ ...HEADER, alg: 'ES256' })).toString(
          'base64url',
        );
        return `${header}.${payload}.${signature}`;
      },
      'alg ES256 is not EdDSA',
    ],
    [
      'no typ',
      async () => signRaw({ alg: 'EdDSA', kid: HEADER.kid }, PAYLOAD),
      'typ undefined is not agent-proof+jwt',
    ],
    [
      'typ JWT',
      async () => signRaw({ ...HEADER, typ: 'JWT' }, PAYLOAD),
      'typ JWT is not agent-proof+jwt',
    ],
    [
      'no kid',
      async () => signRaw({ alg: 'EdDSA', typ: HEADER.typ }, PAYLOAD),
      'kid undefined is not the agent key',
    ],
    [
      "another agent's kid, signed by that agent",
      async () => signRaw({ ...HEADER, kid: kidOf(OTHER.publicKeyMultibase) }, PAYLOAD, OTHER),
      `kid ${kidOf(OTHER.publicKeyMultibase)} is not the agent key`,
    ],
    [
      'a kid without the fragment',
      async () => signRaw({ ...HEADER, kid: `did:key:${AGENT.publicKeyMultibase}` }, PAYLOAD),
      'is not the agent key',
    ],
    [
      "the agent's kid, signed by another key",
      async () => signRaw(HEADER, PAYLOAD, OTHER),
      'signature verification failed',
    ],
    [
      'a critical header extension',
      async () => signRaw({ ...HEADER, crit: ['exp'], exp: 1 }, PAYLOAD),
      'not an acceptable JWS',
    ],
    [
      'another method',
      async () => signRaw(HEADER, { ...PAYLOAD, htm: 'GET' }),
      'htm GET is not POST',
    ],
    [
      'another URL',
      async () => signRaw(HEADER, { ...PAYLOAD, htu: `${HTU}?x=1` }),
      `htu ${HTU}?x=1 is not ${HTU}`,
    ],
    [
      'another body',
      async () => signRaw(HEADER, { ...PAYLOAD, body_sha256: bodyDigest('{}') }),
      'body_sha256 is not the SHA-256 of the request body',
    ],
    [
      'a hex body digest',
      async () =>
        signRaw(HEADER, {
          ...PAYLOAD,
          body_sha256: createHash('sha256').update(BODY).digest('hex'),
        }),
      'body_sha256 is not the SHA-256',
    ],
    [
      'a payload that is not JSON',
      async () => signBytes(HEADER, 'not json'),
      'the payload is not JSON',
    ],
    [
      'a payload that is an array',
      async () => signRaw(HEADER, [PAYLOAD]),
      'payload: must be a JSON object',
    ],
    [
      'no jti',
      async () => signRaw(HEADER, { ...PAYLOAD, jti: undefined }),
      'jti: must be a string of 1-64',
    ],
    [
      'an empty jti',
      async () => signRaw(HEADER, { ...PAYLOAD, jti: '' }),
      'jti: must be a string of 1-64',
    ],
    [
      'a 65-character jti',
      async () => signRaw(HEADER, { ...PAYLOAD, jti: 'j'.repeat(65) }),
      'jti: must be',
    ],
    ['a numeric jti', async () => signRaw(HEADER, { ...PAYLOAD, jti: 7 }), 'jti: must be'],
    [
      'iat as a string',
      async () => signRaw(HEADER, { ...PAYLOAD, iat: String(IAT) }),
      'iat: must be an integer',
    ],
    [
      'a fractional iat',
      async () => signRaw(HEADER, { ...PAYLOAD, iat: IAT + 0.5 }),
      'iat: must be an integer',
    ],
    [
      'no htu',
      async () => signRaw(HEADER, { ...PAYLOAD, htu: undefined }),
      'htu: must be a string',
    ],
  ];

  it.each(refusals)('refuses %s as AGENT_PROOF_INVALID', async (_name, make, problem) => {
    const result = await verifyAgentProof(await make(), expected);
    expect(result).toMatchObject({ ok: false, code: 'AGENT_PROOF_INVALID' });
    expect(result.ok === false && result.message).toMatch(/^agent proof is invalid: /);
    expect(result.ok === false && result.message).toContain(problem);
  });

  it('accepts a 64-character jti', async () => {
    const result = await verifyAgentProof(
      await signRaw(HEADER, { ...PAYLOAD, jti: 'j'.repeat(64) }),
      expected,
    );
    expect(result).toEqual({ ok: true, jti: 'j'.repeat(64), iat: IAT });
  });

  it('refuses when the expected key is not an Ed25519 key', async () => {
    const bad = 'z6MkNotAKey';
    const jws = await signRaw({ ...HEADER, kid: kidOf(bad) }, PAYLOAD);
    const result = await verifyAgentProof(jws, { ...expected, publicKeyMultibase: bad });
    expect(result.ok === false && result.message).toContain(
      `the agent key ${bad} is not an Ed25519 public key`,
    );
  });

  it('never accepts a proof with any character changed', async () => {
    const jws = await signRaw(HEADER, PAYLOAD);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: jws.length - 1 }),
        fc.constantFrom(...alphabet),
        async (at, char) => {
          fc.pre(jws[at] !== char);
          const tampered = jws.slice(0, at) + char + jws.slice(at + 1);
          expect((await verifyAgentProof(tampered, expected)).ok).toBe(false);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe('the header', () => {
  it('is read before the signature, so a proof for another key costs no verification', async () => {
    const jws = await createAgentProof({ key: OTHER, htm: 'POST', htu: HTU, body: BODY, now: NOW });
    expect(decodeProtectedHeader(jws).kid).toBe(kidOf(OTHER.publicKeyMultibase));
    const result = await verifyAgentProof(jws, expected);
    expect(result.ok === false && result.message).toContain('is not the agent key');
  });
});
