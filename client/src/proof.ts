// The Agent-Proof header (docs/agentiam.md): a compact JWS, alg EdDSA, typ agent-proof+jwt, kid
// the agent's did:key verification method, over { htm, htu, body_sha256, iat, jti } — the same
// claims and header the gateway's verifier (shared/agentiam/proof-of-possession.ts) checks,
// signed here with WebCrypto so it runs in browsers and edge runtimes as well as Node.
import { encodeBase58btc } from './base58btc.js';
import type { Ed25519PrivateJwk } from './config.js';

const encoder = new TextEncoder();

export const AGENT_PROOF_TYPE = 'agent-proof+jwt';

export interface AgentSigner {
  /** The agent's z6Mk… public key (multibase base58btc of the multicodec Ed25519 key). */
  readonly publicKeyMultibase: string;
  /** `did:key:z6Mk…#z6Mk…`, the kid of every proof. */
  readonly kid: string;
  sign(data: Uint8Array<ArrayBuffer>): Promise<Uint8Array>;
}

/** Imports the private JWK once (only kty, crv, x, d are read). */
export async function createAgentSigner(jwk: Ed25519PrivateJwk): Promise<AgentSigner> {
  const key = await globalThis.crypto.subtle.importKey(
    'jwk',
    { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d },
    { name: 'Ed25519' },
    false,
    ['sign'],
  );
  const publicKeyMultibase = ed25519Multibase(fromBase64url(jwk.x as string));
  return {
    publicKeyMultibase,
    kid: `did:key:${publicKeyMultibase}#${publicKeyMultibase}`,
    async sign(data) {
      return new Uint8Array(await globalThis.crypto.subtle.sign('Ed25519', key, data));
    },
  };
}

export interface AgentProofInput {
  readonly htm: string;
  readonly htu: string;
  /** The exact body text sent (UTF-8). */
  readonly body: string;
  readonly now?: number;
  readonly jti?: string;
}

export async function createAgentProof(
  signer: AgentSigner,
  input: AgentProofInput,
): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(input.body));
  const header = { alg: 'EdDSA', typ: AGENT_PROOF_TYPE, kid: signer.kid };
  const payload = {
    htm: input.htm,
    htu: input.htu,
    body_sha256: toBase64url(new Uint8Array(digest)),
    iat: Math.floor((input.now ?? Date.now()) / 1000),
    jti: input.jti ?? globalThis.crypto.randomUUID(),
  };
  const signingInput = `${toBase64url(encoder.encode(JSON.stringify(header)))}.${toBase64url(
    encoder.encode(JSON.stringify(payload)),
  )}`;
  const signature = await signer.sign(encoder.encode(signingInput));
  return `${signingInput}.${toBase64url(signature)}`;
}

const ED25519_MULTICODEC = [0xed, 0x01];

/** `z` + base58btc(0xed 0x01 ‖ key): the did:key form of an Ed25519 public key. */
export function ed25519Multibase(publicKey: Uint8Array): string {
  return `z${encodeBase58btc(Uint8Array.from([...ED25519_MULTICODEC, ...publicKey]))}`;
}

export function toBase64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
