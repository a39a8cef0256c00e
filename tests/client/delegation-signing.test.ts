// The signing side of `@agent-gateway/client/delegation`, without a gateway: the package's own
// JSON-LD contexts are byte for byte the gateway's (schema/contexts/), a delegation is signed
// without any network access and verifies with Digital Bazaar's verifier, the offline loader
// refuses every URL that is not one of those contexts or a did:key, and delegate() / chainFor()
// refuse, by code and field, what the gateway's chain verifier would refuse.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { verifyCredential } from '@digitalbazaar/vc';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  chainFor,
  type DelegateOptions,
  DelegationError,
  delegate,
  offlineDocumentLoader,
} from '../../client/src/delegation.js';
import { generateEd25519KeyMaterial, toPrivateJwk } from '../../shared/agentiam/ed25519-keys.js';

const SCHEMA_CONTEXTS = new URL('../../schema/contexts/', import.meta.url);
const CLIENT_CONTEXTS = new URL('../../client/contexts/', import.meta.url);
const TENANT = randomUUID();
const a = generateEd25519KeyMaterial();
const b = generateEd25519KeyMaterial();
const c = generateEd25519KeyMaterial();
const aJwk = toPrivateJwk(a);

const options = (overrides: Partial<DelegateOptions> = {}): DelegateOptions => ({
  from: { agentId: 'agent-a', privateKeyJwk: aJwk },
  to: { agentId: 'agent-b', publicKey: b.publicKeyMultibase },
  tools: ['search'],
  tenantId: TENANT,
  ...overrides,
});

/** A credential held by `key`/`agentId` (only its shape matters to delegate's own checks). */
const held = (overrides: Record<string, unknown> = {}) => ({
  issuer: `did:svc:${TENANT}`,
  expirationDate: new Date(Date.now() + 7200_000).toISOString(),
  credentialSubject: {
    id: `did:key:${a.publicKeyMultibase}`,
    tenantId: TENANT,
    agentId: 'agent-a',
    permittedTools: ['search', 'send_mail'],
    ...overrides,
  },
});

async function refusal(promise: Promise<unknown>): Promise<DelegationError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DelegationError);
  return error as DelegationError;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the package contexts', () => {
  it('are byte for byte the gateway schema/contexts/ (index.json and every file it names)', () => {
    const index = JSON.parse(readFileSync(new URL('index.json', SCHEMA_CONTEXTS), 'utf8'));
    const files = ['index.json', ...Object.values(index as Record<string, string>)];
    for (const file of files) {
      expect(
        readFileSync(new URL(file, CLIENT_CONTEXTS)).equals(
          readFileSync(new URL(file, SCHEMA_CONTEXTS)),
        ),
        `client/contexts/${file} differs: run npx tsx client/contexts/copy-schema-contexts.ts`,
      ).toBe(true);
    }
    const extra = readdirSync(CLIENT_CONTEXTS).filter(
      (file) => !files.includes(file) && file !== 'copy-schema-contexts.ts',
    );
    expect(extra).toEqual([]);
  });

  it('the offline loader serves them and did:key documents, and refuses every other URL', async () => {
    const context = await offlineDocumentLoader('https://agent-gateway.dev/contexts/agentiam/v1');
    expect(context).toMatchObject({
      documentUrl: 'https://agent-gateway.dev/contexts/agentiam/v1',
    });
    const did = `did:key:${a.publicKeyMultibase}`;
    const method = await offlineDocumentLoader(`${did}#${a.publicKeyMultibase}`);
    expect(method.document).toMatchObject({
      id: `${did}#${a.publicKeyMultibase}`,
      type: 'Ed25519VerificationKey2020',
      controller: did,
      publicKeyMultibase: a.publicKeyMultibase,
    });
    for (const url of [
      'https://www.w3.org/2018/credentials/examples/v1',
      'https://w3id.org/security/v2',
      'http://127.0.0.1:8080/contexts/agentiam-v1.jsonld',
      `did:svc:${TENANT}`,
      `did:svc:${TENANT}#agentiam-ca`,
      'did:key:z6Mknotakey',
      `${did}#other`,
      'did:web:example.com',
    ]) {
      const error = await refusal(offlineDocumentLoader(url));
      expect(error.code, url).toBe('DOCUMENT_NOT_AVAILABLE');
    }
  });
});

describe('delegate', () => {
  it('signs without touching the network a link that Digital Bazaar verifies', async () => {
    const fetchSpy = vi.fn(async () => {
      throw new Error('no network');
    });
    vi.stubGlobal('fetch', fetchSpy);
    const link = await delegate(options({ tools: ['search', 'search', 'read_file'] }));
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(link.credentialSubject.permittedTools).toEqual(['search', 'read_file']);
    expect(link.proof).toMatchObject({
      type: 'Ed25519Signature2020',
      created: link.issuanceDate,
      verificationMethod: `did:key:${a.publicKeyMultibase}#${a.publicKeyMultibase}`,
      proofPurpose: 'assertionMethod',
    });
    expect(Date.parse(link.expirationDate) - Date.parse(link.issuanceDate)).toBe(3600_000);
    const result = await verifyCredential({
      credential: link,
      suite: new Ed25519Signature2020(),
      documentLoader: offlineDocumentLoader,
    });
    expect(result.verified).toBe(true);
    const tampered = {
      ...link,
      credentialSubject: { ...link.credentialSubject, permittedTools: ['*'] },
    };
    const forged = await verifyCredential({
      credential: tampered,
      suite: new Ed25519Signature2020(),
      documentLoader: offlineDocumentLoader,
    });
    expect(forged.verified).toBe(false);
  });

  it("accepts any JWK-shaped Ed25519 private key (Node's export) and did:key forms of the keys", async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const link = await delegate(
      options({
        from: { agentId: 'agent-a', privateKeyJwk: jwk },
        to: { agentId: 'agent-b', publicKey: `did:key:${b.publicKeyMultibase}` },
      }),
    );
    expect(link.issuer).toMatch(/^did:key:z6Mk/);
    expect(link.credentialSubject.id).toBe(`did:key:${b.publicKeyMultibase}`);
  });

  it('refuses an unusable key, naming the field', async () => {
    const cases: [DelegateOptions['from'], string][] = [
      [{ agentId: 'agent-a', privateKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: aJwk.x } }, 'd'],
      [{ agentId: 'agent-a', privateKeyJwk: { ...aJwk, crv: 'X25519' } }, 'crv'],
      [{ agentId: 'agent-a', privateKeyJwk: { ...aJwk, d: aJwk.d.slice(4) } }, 'short d'],
      [{ agentId: 'agent-a', privateKeyJwk: { ...aJwk, x: toPrivateJwk(b).x } }, 'other x'],
    ];
    for (const [from, label] of cases) {
      const error = await refusal(delegate(options({ from })));
      expect([error.code, error.field], label).toEqual([
        'DELEGATION_KEY_INVALID',
        'from.privateKeyJwk',
      ]);
    }
    const mismatch = await refusal(
      delegate(options({ from: { ...options().from, publicKey: b.publicKeyMultibase } })),
    );
    expect([mismatch.code, mismatch.field]).toEqual(['DELEGATION_KEY_INVALID', 'from.publicKey']);
    const didMismatch = await refusal(
      delegate(options({ from: { ...options().from, did: `did:key:${c.publicKeyMultibase}` } })),
    );
    expect([didMismatch.code, didMismatch.field]).toEqual(['DELEGATION_KEY_INVALID', 'from.did']);
  });

  it('refuses malformed options, naming the field', async () => {
    const cases: [Partial<DelegateOptions>, string][] = [
      [{ tenantId: '' }, 'tenantId'],
      [{ to: { agentId: 'agent-b', publicKey: 'z6Mknotakey' } }, 'to.publicKey'],
      [{ to: { agentId: '', publicKey: b.publicKeyMultibase } }, 'to.agentId'],
      [{ from: { agentId: ' ', privateKeyJwk: aJwk } }, 'from.agentId'],
      [{ tools: [] }, 'tools'],
      [{ tools: ['search', ''] }, 'tools'],
      [{ ttlSeconds: 59 }, 'ttlSeconds'],
      [{ ttlSeconds: 30 * 24 * 3600 + 1 }, 'ttlSeconds'],
      [{ ttlSeconds: 90.5 }, 'ttlSeconds'],
      [{ now: new Date(Number.NaN) }, 'now'],
    ];
    for (const [overrides, field] of cases) {
      const error = await refusal(delegate(options(overrides)));
      expect([error.code, error.field]).toEqual(['DELEGATION_OPTIONS_INVALID', field]);
    }
  });

  it('given the credential it delegates from, refuses what the chain verifier would refuse', async () => {
    const refused = async (credential: Record<string, unknown>, overrides = {}) =>
      refusal(delegate(options({ from: { ...options().from, credential }, ...overrides })));
    const other = await refused(held({ id: `did:key:${c.publicKeyMultibase}` }));
    expect([other.code, other.field]).toEqual(['DELEGATION_BROKEN_LINK', 'from.credential']);
    const otherAgent = await refused(held({ agentId: 'agent-z' }));
    expect(otherAgent.code).toBe('DELEGATION_BROKEN_LINK');
    const widened = await refused(held(), { tools: ['search', 'delete_all'] });
    expect([widened.code, widened.field, widened.message]).toEqual([
      'DELEGATION_TOOLS_WIDENED',
      'tools',
      expect.stringContaining('delete_all'),
    ]);
    const outlives = await refused(held(), { ttlSeconds: 3 * 3600 });
    expect([outlives.code, outlives.field]).toEqual(['DELEGATION_EXPIRY_NOT_NESTED', 'ttlSeconds']);
    const tenant = await refused(held({ tenantId: randomUUID() }));
    expect([tenant.code, tenant.field]).toEqual(['DELEGATION_OPTIONS_INVALID', 'tenantId']);
    const malformed = await refused({ credentialSubject: { id: 'x' } });
    expect([malformed.code, malformed.field]).toEqual(['CREDENTIAL_MALFORMED', 'from.credential']);
    // `*` holds every tool.
    const link = await delegate(
      options({
        from: { ...options().from, credential: held({ permittedTools: ['*'] }) },
        tools: ['anything'],
      }),
    );
    expect(link.credentialSubject.permittedTools).toEqual(['anything']);
  });
});

describe('chainFor', () => {
  it('appends a link to the credential or presentation it continues, and refuses one that does not', async () => {
    const root = held();
    const ab = await delegate(options());
    const first = chainFor(root, ab);
    expect(first).toEqual({ rootCredential: root, chain: [ab] });
    const bc = await delegate({
      from: { agentId: 'agent-b', privateKeyJwk: toPrivateJwk(b), credential: ab },
      to: { agentId: 'agent-c', publicKey: c.publicKeyMultibase },
      tools: ['search'],
      ttlSeconds: 600,
      tenantId: TENANT,
    });
    expect(chainFor(first, bc)).toEqual({ rootCredential: root, chain: [ab, bc] });
    const skipped = (() => {
      try {
        return chainFor(root, bc);
      } catch (error) {
        return error;
      }
    })();
    expect(skipped).toBeInstanceOf(DelegationError);
    expect(skipped).toMatchObject({ code: 'DELEGATION_BROKEN_LINK', field: 'link' });
    expect(() => chainFor(root, { credentialSubject: {} })).toThrow(DelegationError);
  });
});
