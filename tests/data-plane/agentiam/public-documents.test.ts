// The public AgentIAM documents every data plane serves from its snapshot, without an API key:
// DID resolution on the DIF Universal Resolver HTTP binding (resolution result by default, the
// bare document on Accept, spec-shaped errors), the JSON-LD contexts and the signed status lists,
// each with an ETag that answers 304 to If-None-Match and the Cache-Control its content allows.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_URIS } from '../../../shared/agentiam/contexts.js';
import { decodeStatusList, isBitSet } from '../../../shared/agentiam/status-list.js';
import {
  addKeyedAgent,
  issueCredential,
  type KeyedAgent,
  revokeCredential,
  rotateTenantKey,
} from '../../support/agentiam-client.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { quickDatabaseKind } from '../inspect/support.js';

interface StatusListCredential {
  readonly credentialSubject: { readonly encodedList: string };
}

const RESOLUTION = 'application/ld+json;profile="https://w3id.org/did-resolution"';

async function get(
  gateway: TestGateway,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(`${gateway.url}${path}`, { headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

describe('AgentIAM public documents', () => {
  let gateway: TestGateway;
  let agent: KeyedAgent;
  let credential: Record<string, unknown>;
  let did: string;

  beforeAll(async () => {
    gateway = await startTestGateway(quickDatabaseKind);
    agent = await addKeyedAgent(gateway, gateway.tenant.id);
    credential = await issueCredential(gateway, agent);
    did = `did:svc:${gateway.tenant.id}`;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  describe('GET /1.0/identifiers/{did}', () => {
    it('answers a did:svc with the DID resolution result holding the tenant CA key', async () => {
      const answer = await get(gateway, `/1.0/identifiers/${did}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(RESOLUTION);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
      expect(answer.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      const proof = credential.proof as { verificationMethod: string };
      const caKey = await gateway.db.prisma.tenantSigningKey.findFirstOrThrow({
        where: { tenantId: gateway.tenant.id, status: 'active' },
      });
      expect(answer.json).toEqual({
        '@context': 'https://w3id.org/did-resolution/v1',
        didDocument: {
          '@context': [CONTEXT_URIS.didV1, CONTEXT_URIS.ed25519V1],
          id: did,
          verificationMethod: [
            {
              id: `${did}#agentiam-ca`,
              type: 'Ed25519VerificationKey2020',
              controller: did,
              publicKeyMultibase: caKey.publicKey,
            },
          ],
          assertionMethod: [`${did}#agentiam-ca`],
        },
        didResolutionMetadata: { contentType: 'application/did+ld+json' },
        didDocumentMetadata: {},
      });
      expect(proof.verificationMethod).toBe(`${did}#agentiam-ca`);
      expect(caKey.publicKey).toMatch(/^z6Mk/);
    });

    it('answers the bare DID document for Accept application/did+ld+json or did+json', async () => {
      const full = (await get(gateway, `/1.0/identifiers/${did}`)).json as {
        didDocument: unknown;
      };
      for (const accept of [
        'application/did+ld+json',
        'application/did+json',
        'text/html, application/did+ld+json;q=0.9',
      ]) {
        const answer = await get(gateway, `/1.0/identifiers/${did}`, { accept });
        expect(answer.status).toBe(200);
        expect(answer.json).toEqual(full.didDocument);
        expect(answer.headers.get('content-type')).toBe(
          accept === 'application/did+json' ? 'application/did+json' : 'application/did+ld+json',
        );
        expect(answer.headers.get('vary')).toBe('Accept');
      }
      const preferred = await get(gateway, `/1.0/identifiers/${did}`, {
        accept: 'application/did+ld+json;q=0.5, application/ld+json',
      });
      expect(preferred.headers.get('content-type')).toBe(RESOLUTION);
    });

    it('answers 304 to If-None-Match with its ETag, per representation', async () => {
      const first = await get(gateway, `/1.0/identifiers/${did}`);
      const etag = first.headers.get('etag') as string;
      const again = await get(gateway, `/1.0/identifiers/${did}`, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const weak = await get(gateway, `/1.0/identifiers/${did}`, {
        'if-none-match': `"other", W/${etag}`,
      });
      expect(weak.status).toBe(304);
      const bare = await get(gateway, `/1.0/identifiers/${did}`, {
        accept: 'application/did+ld+json',
        'if-none-match': etag,
      });
      expect(bare.status).toBe(200);
      expect(bare.headers.get('etag')).not.toBe(etag);
    });

    it('resolves a did:key to its computed document', async () => {
      const z = agent.key.publicKeyMultibase;
      const answer = await get(gateway, `/1.0/identifiers/did:key:${z}`, {
        accept: 'application/did+ld+json',
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(answer.json).toMatchObject({
        id: `did:key:${z}`,
        verificationMethod: [
          {
            id: `did:key:${z}#${z}`,
            type: 'Ed25519VerificationKey2020',
            controller: `did:key:${z}`,
            publicKeyMultibase: z,
          },
        ],
        assertionMethod: [`did:key:${z}#${z}`],
      });
    });

    it('answers errors as resolution results: invalidDid 400, notFound 404, methodNotSupported 501', async () => {
      const cases: [string, number, string][] = [
        ['not-a-did', 400, 'invalidDid'],
        ['did:key:z6MkNotAKey', 400, 'invalidDid'],
        ['did:svc:', 400, 'invalidDid'],
        ['did:svc:a b', 400, 'invalidDid'],
        [`did:svc:${crypto.randomUUID()}`, 404, 'notFound'],
        ['did:web:example.com', 501, 'methodNotSupported'],
      ];
      for (const [value, status, error] of cases) {
        const answer = await get(gateway, `/1.0/identifiers/${encodeURIComponent(value)}`);
        expect({ value, status: answer.status }).toEqual({ value, status });
        expect(answer.headers.get('content-type')).toBe(RESOLUTION);
        expect(answer.headers.get('cache-control')).toBe('no-store');
        expect(answer.json).toMatchObject({
          '@context': 'https://w3id.org/did-resolution/v1',
          didDocument: null,
          didResolutionMetadata: { error },
          didDocumentMetadata: {},
        });
      }
    });

    it('does not resolve a tenant that has no CA key yet (no tenant data beyond keys)', async () => {
      const other = await gateway.addTenant();
      const answer = await get(gateway, `/1.0/identifiers/did:svc:${other.id}`);
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ didResolutionMetadata: { error: 'notFound' } });
    });

    it('lists a retired key beside the new one after a rotation', async () => {
      const tenant = await gateway.addTenant();
      const rotating = await addKeyedAgent(gateway, tenant.id);
      await issueCredential(gateway, rotating);
      await rotateTenantKey(gateway, tenant.id);
      const keys = await gateway.db.prisma.tenantSigningKey.findMany({
        where: { tenantId: tenant.id },
        orderBy: { createdAt: 'asc' },
      });
      expect(keys.map((key) => key.status)).toEqual(['retired', 'active']);
      const tenantDid = `did:svc:${tenant.id}`;
      const answer = await get(gateway, `/1.0/identifiers/${tenantDid}`, {
        accept: 'application/did+ld+json',
      });
      expect(answer.json).toMatchObject({
        verificationMethod: [
          { id: `${tenantDid}#agentiam-ca`, publicKeyMultibase: keys[1]?.publicKey },
          {
            id: `${tenantDid}#agentiam-ca-${keys[0]?.id}`,
            publicKeyMultibase: keys[0]?.publicKey,
          },
        ],
        assertionMethod: [`${tenantDid}#agentiam-ca`, `${tenantDid}#agentiam-ca-${keys[0]?.id}`],
      });
    });
  });

  describe('GET /contexts/{file}', () => {
    it('serves every committed context byte for byte, cacheable, with an ETag', async () => {
      const index = JSON.parse(readFileSync('schema/contexts/index.json', 'utf8')) as Record<
        string,
        string
      >;
      expect(Object.keys(index)).toEqual(expect.arrayContaining(Object.values(CONTEXT_URIS)));
      for (const file of Object.values(index)) {
        const answer = await get(gateway, `/contexts/${file}`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toBe('application/ld+json');
        expect(answer.headers.get('cache-control')).toBe('public, max-age=86400');
        expect(answer.text).toBe(readFileSync(`schema/contexts/${file}`, 'utf8'));
        const etag = answer.headers.get('etag') as string;
        const again = await get(gateway, `/contexts/${file}`, { 'if-none-match': etag });
        expect(again.status).toBe(304);
      }
    });

    it('answers 404 NOT_FOUND in the error model for any other name', async () => {
      for (const file of [
        'index.json',
        'nope.jsonld',
        '..%2Fpackage.json',
        'write-standard-contexts.ts',
      ]) {
        const answer = await get(gateway, `/contexts/${file}`);
        expect(answer.status).toBe(404);
        expect(answer.json).toMatchObject({ error: 'NOT_FOUND', reasonCode: 'NOT_FOUND' });
      }
    });
  });

  describe('GET /api/v1/agentiam/status-lists/{id}', () => {
    it('serves the signed list the credential names; revalidated; a revocation changes it', async () => {
      const status = credential.credentialStatus as {
        statusListCredential: string;
        statusListIndex: string;
      };
      const url = new URL(status.statusListCredential);
      expect(url.origin).toBe(gateway.url);
      const first = await get(gateway, url.pathname);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('application/ld+json');
      expect(first.headers.get('cache-control')).toBe('no-cache');
      const list = first.json as StatusListCredential;
      expect(list).toMatchObject({
        id: status.statusListCredential,
        type: ['VerifiableCredential', 'BitstringStatusListCredential'],
        issuer: did,
        credentialSubject: {
          id: `${status.statusListCredential}#list`,
          type: 'BitstringStatusList',
          statusPurpose: 'revocation',
        },
        proof: { type: 'Ed25519Signature2020', verificationMethod: `${did}#agentiam-ca` },
      });
      const index = Number(status.statusListIndex);
      expect(isBitSet(decodeStatusList(list.credentialSubject.encodedList), index)).toBe(false);
      const etag = first.headers.get('etag') as string;
      expect((await get(gateway, url.pathname, { 'if-none-match': etag })).status).toBe(304);

      await revokeCredential(gateway, gateway.tenant.id, credential);
      const after = await get(gateway, url.pathname, { 'if-none-match': etag });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(etag);
      const revoked = after.json as StatusListCredential;
      expect(isBitSet(decodeStatusList(revoked.credentialSubject.encodedList), index)).toBe(true);
    });

    it('answers 404 NOT_FOUND for an unknown list', async () => {
      const answer = await get(gateway, `/api/v1/agentiam/status-lists/${crypto.randomUUID()}`);
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ error: 'NOT_FOUND' });
    });
  });
});
