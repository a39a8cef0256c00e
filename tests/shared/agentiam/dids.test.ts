// DIDs of AgentIAM: did:svc for a tenant CA, did:key for an agent; key material from a seed.
import { describe, expect, it } from 'vitest';
import { CONTEXT_URIS } from '../../../shared/agentiam/contexts.js';
import {
  agentDid,
  agentVerificationMethodId,
  CA_FRAGMENT,
  didKeyDocument,
  parseDid,
  tenantDid,
  tenantDidDocument,
  tenantVerificationMethodId,
} from '../../../shared/agentiam/dids.js';
import {
  generateEd25519KeyMaterial,
  keyMaterialFromSeed,
} from '../../../shared/agentiam/ed25519-keys.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { encodeEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';

const TENANT = '3f1c2b7e-8d4a-4e55-9a61-2b7c0d9e8f10';
/** The did:key spec's Ed25519 example (https://w3c-ccg.github.io/did-method-key/). */
const SPEC_KEY = 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';

describe('key material', () => {
  it('derives the public key of RFC 8032 test vector 1 from its seed', () => {
    const seed = Buffer.from(
      '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
      'hex',
    );
    const publicKey = Buffer.from(
      'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
      'hex',
    );
    const material = keyMaterialFromSeed(seed);
    expect(material.publicKeyMultibase).toBe(encodeEd25519PublicKey(publicKey));
    expect(material.publicKeyMultibase).toMatch(/^z6Mk/);
    expect(Buffer.from(material.secretKey).equals(seed)).toBe(true);
  });

  it('generates distinct keys whose seed gives back the same public key', () => {
    const a = generateEd25519KeyMaterial();
    const b = generateEd25519KeyMaterial();
    expect(a.publicKeyMultibase).not.toBe(b.publicKeyMultibase);
    expect(keyMaterialFromSeed(a.secretKey)).toEqual(a);
  });

  it('rejects a seed that is not 32 bytes', () => {
    expect(() => keyMaterialFromSeed(new Uint8Array(31))).toThrow(GatewayError);
    expect(() => keyMaterialFromSeed(new Uint8Array(64))).toThrow(/32 bytes, not 64/);
  });
});

describe('DIDs', () => {
  it('name tenants, agents and their verification methods as the contract fixes', () => {
    expect(tenantDid(TENANT)).toBe(`did:svc:${TENANT}`);
    expect(tenantVerificationMethodId(TENANT)).toBe(`did:svc:${TENANT}#agentiam-ca`);
    expect(CA_FRAGMENT).toBe('agentiam-ca');
    expect(agentDid(SPEC_KEY)).toBe(`did:key:${SPEC_KEY}`);
    expect(agentVerificationMethodId(SPEC_KEY)).toBe(`did:key:${SPEC_KEY}#${SPEC_KEY}`);
  });

  it('parse back, and nothing else parses', () => {
    expect(parseDid(tenantDid(TENANT))).toEqual({ method: 'svc', tenantId: TENANT });
    expect(parseDid(agentDid(SPEC_KEY))).toEqual({ method: 'key', publicKeyMultibase: SPEC_KEY });
    for (const did of [
      'did:svc:',
      `did:svc:${TENANT}#agentiam-ca`,
      'did:svc:a:b',
      'did:svc:a%20b',
      `did:key:${SPEC_KEY}#${SPEC_KEY}`,
      `did:key:${SPEC_KEY.slice(0, -1)}`,
      'did:key:z6LSbysY2xFMRpGMhb7tFTLMpeuPRaqaWM1yECx2AtzE3KCc', // X25519, not Ed25519
      'did:web:example.com',
      `DID:svc:${TENANT}`,
      '',
    ]) {
      expect(parseDid(did), did).toBeNull();
    }
  });
});

describe('DID documents', () => {
  it('did:svc lists the active key as #agentiam-ca and a retired one by kid, both for assertions', () => {
    const active = generateEd25519KeyMaterial().publicKeyMultibase;
    const retired = generateEd25519KeyMaterial().publicKeyMultibase;
    const did = tenantDid(TENANT);
    const document = tenantDidDocument(TENANT, [
      { id: 'kid-new', publicKeyMultibase: active, status: 'active', resolvableUntil: null },
      {
        id: 'kid-old',
        publicKeyMultibase: retired,
        status: 'retired',
        resolvableUntil: '2026-12-01T00:00:00.000Z',
      },
    ]);
    expect(document).toEqual({
      '@context': ['https://www.w3.org/ns/did/v1', CONTEXT_URIS.ed25519V1],
      id: did,
      verificationMethod: [
        {
          id: `${did}#agentiam-ca`,
          type: 'Ed25519VerificationKey2020',
          controller: did,
          publicKeyMultibase: active,
        },
        {
          id: `${did}#agentiam-ca-kid-old`,
          type: 'Ed25519VerificationKey2020',
          controller: did,
          publicKeyMultibase: retired,
        },
      ],
      assertionMethod: [`${did}#agentiam-ca`, `${did}#agentiam-ca-kid-old`],
    });
  });

  it('did:key is computed from the key, as the did:key method defines it for Ed25519 2020', () => {
    const did = `did:key:${SPEC_KEY}`;
    const method = `${did}#${SPEC_KEY}`;
    expect(didKeyDocument(SPEC_KEY)).toEqual({
      '@context': ['https://www.w3.org/ns/did/v1', CONTEXT_URIS.ed25519V1],
      id: did,
      verificationMethod: [
        {
          id: method,
          type: 'Ed25519VerificationKey2020',
          controller: did,
          publicKeyMultibase: SPEC_KEY,
        },
      ],
      authentication: [method],
      assertionMethod: [method],
      capabilityDelegation: [method],
      capabilityInvocation: [method],
    });
    expect(didKeyDocument('z6MkNotAKey')).toBeNull();
    expect(didKeyDocument(`u${SPEC_KEY.slice(1)}`)).toBeNull();
  });
});
