// The client's Agent-Proof, made with WebCrypto, is what the gateway's verifier
// (shared/agentiam/proof-of-possession.ts) accepts: same header, claims, digest and key form;
// and its did:key multibase is the gateway's encoding of the same public key.
import { describe, expect, it } from 'vitest';
import { createAgentProof, ed25519Multibase } from '../../client/src/index.js';
import { createAgentSigner, fromBase64url } from '../../client/src/proof.js';
import { verifyAgentProof } from '../../shared/agentiam/proof-of-possession.js';
import { encodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';

async function newKey() {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  return (await crypto.subtle.exportKey('jwk', pair.privateKey)) as { x: string; d: string };
}

describe('the client Agent-Proof', () => {
  it('encodes the public key as the gateway does (z6Mk…)', async () => {
    for (let i = 0; i < 20; i++) {
      const jwk = await newKey();
      const raw = fromBase64url(jwk.x);
      expect(ed25519Multibase(raw)).toBe(encodeEd25519PublicKey(raw));
    }
  });

  it("verifies with the gateway's verifier, for that body only", async () => {
    const jwk = await newKey();
    const signer = await createAgentSigner({ kty: 'OKP', crv: 'Ed25519', ...jwk });
    const htu = 'http://127.0.0.1:8080/api/v1/mcp/gateway/inspect';
    const body = JSON.stringify({ agent_id: 'a', text: 'héllo ✓' });
    const now = Date.now();
    const proof = await createAgentProof(signer, { htm: 'POST', htu, body, now });
    const options = {
      publicKeyMultibase: signer.publicKeyMultibase,
      htm: 'POST',
      htu,
      body: new TextEncoder().encode(body),
      now: new Date(now),
    };
    expect(await verifyAgentProof(proof, options)).toMatchObject({ ok: true });
    expect(
      await verifyAgentProof(proof, { ...options, body: new TextEncoder().encode(`${body} `) }),
    ).toMatchObject({ ok: false, code: 'AGENT_PROOF_INVALID' });
    expect(await verifyAgentProof(proof, { ...options, htu: `${htu}x` })).toMatchObject({
      ok: false,
    });
  });
});
