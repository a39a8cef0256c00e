// The JSON-LD contexts of AgentIAM credentials: the committed copies are exactly the documents
// the context packages publish, our vocabulary defines every term it adds (and no other
// context's), and the document loader serves these, did:key and did:svc — nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as statusContext from '@digitalbazaar/vc-bitstring-status-list-context';
import credentialsContext from 'credentials-context';
import didContext from 'did-context';
import ed25519Context from 'ed25519-signature-2020-context';
import { describe, expect, it } from 'vitest';
import { CONTEXT_URIS, contextFile, loadContexts } from '../../../shared/agentiam/contexts.js';
import { didKeyDocument, tenantDidDocument } from '../../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../../shared/agentiam/document-loader.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { findPackageRoot } from '../../../shared/package-root.js';

const CONTEXTS_DIR = join(findPackageRoot(), 'schema', 'contexts');
const index = JSON.parse(readFileSync(join(CONTEXTS_DIR, 'index.json'), 'utf8')) as Record<
  string,
  string
>;
const VOCABULARY = 'https://agent-gateway.dev/contexts/agentiam/v1#';

const PACKAGES = [credentialsContext, statusContext, ed25519Context, didContext];

type ContextMap = Record<string, unknown>;

function contextOf(document: object): ContextMap {
  return (document as { '@context': ContextMap })['@context'];
}

/** Every term a context defines, at the top level and in its type- and property-scoped contexts. */
function definedTerms(context: ContextMap): Set<string> {
  const terms = new Set<string>();
  for (const [term, definition] of Object.entries(context)) {
    if (term.startsWith('@')) continue;
    terms.add(term);
    if (typeof definition === 'object' && definition !== null && '@context' in definition) {
      for (const inner of definedTerms(definition['@context'] as ContextMap)) terms.add(inner);
    }
  }
  return terms;
}

describe('committed contexts', () => {
  it('index.json maps the contract URIs to their files', () => {
    expect(index).toEqual({
      [CONTEXT_URIS.credentialsV1]: 'credentials-v1.jsonld',
      [CONTEXT_URIS.statusV1]: 'credentials-status-v1.jsonld',
      [CONTEXT_URIS.ed25519V1]: 'ed25519-2020-v1.jsonld',
      [CONTEXT_URIS.didV1]: 'did-v1.jsonld',
      [CONTEXT_URIS.agentiamV1]: 'agentiam-v1.jsonld',
    });
  });

  it('are the npm packages’ documents, as npm run schema:contexts writes them', () => {
    for (const contextPackage of PACKAGES) {
      const file = index[contextPackage.CONTEXT_URL];
      expect(file, contextPackage.CONTEXT_URL).toBeDefined();
      const text = readFileSync(join(CONTEXTS_DIR, file as string), 'utf8');
      expect(JSON.parse(text), file).toEqual(contextPackage.CONTEXT);
      expect(text, file).toBe(`${JSON.stringify(contextPackage.CONTEXT, null, 2)}\n`);
    }
  });

  it('our vocabulary is protected and defines each term it adds under its own namespace', () => {
    const vocabulary = contextOf(loadContexts().get(CONTEXT_URIS.agentiamV1)?.document as object);
    expect(vocabulary['@protected']).toBe(true);
    expect(vocabulary['@version']).toBe(1.1);
    const terms = Object.keys(vocabulary).filter((term) => !term.startsWith('@'));
    expect(terms.sort()).toEqual(
      [
        'AgentDelegationCredential',
        'AgentIdentityCredential',
        'agentId',
        'delegatorAgentId',
        'nonTransferable',
        'permittedTools',
        'supervisingUserId',
        'tenantId',
      ].sort(),
    );
    for (const term of terms) {
      const definition = vocabulary[term];
      const iri = typeof definition === 'string' ? definition : (definition as ContextMap)['@id'];
      expect(iri, term).toBe(`${VOCABULARY}${term}`);
    }
    expect(vocabulary.permittedTools).toMatchObject({ '@container': '@set' });
    expect(vocabulary.nonTransferable).toMatchObject({
      '@type': 'http://www.w3.org/2001/XMLSchema#boolean',
    });
  });

  it('our vocabulary redefines no term of the contexts listed before it', () => {
    const ours = Object.keys(
      contextOf(loadContexts().get(CONTEXT_URIS.agentiamV1)?.document as object),
    );
    for (const contextPackage of [credentialsContext, statusContext, ed25519Context]) {
      const theirs = definedTerms(contextOf(contextPackage.CONTEXT));
      expect(
        ours.filter((term) => theirs.has(term)),
        contextPackage.CONTEXT_URL,
      ).toEqual([]);
    }
  });
});

describe('loadContexts and contextFile', () => {
  it('load every indexed context with its committed text', () => {
    const contexts = loadContexts();
    expect([...contexts.keys()].sort()).toEqual(Object.values(CONTEXT_URIS).sort());
    for (const [uri, { file, text, document }] of contexts) {
      expect(index[uri]).toBe(file);
      expect(text).toBe(readFileSync(join(CONTEXTS_DIR, file), 'utf8'));
      expect(document).toEqual(JSON.parse(text));
      expect(contextFile(file)).toEqual({ uri, text });
    }
  });

  it('serve only indexed file names', () => {
    for (const name of ['index.json', 'write-standard-contexts.ts', '../index.json', 'x.jsonld']) {
      expect(contextFile(name), name).toBeUndefined();
    }
  });
});

describe('createDocumentLoader', () => {
  const TENANT = '0f0e0d0c-0b0a-4908-8706-050403020100';
  const CA_KEY = 'z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
  const AGENT_KEY = 'z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH';
  const lookups: string[] = [];
  const loader = createDocumentLoader((did) => {
    lookups.push(did);
    return did === `did:svc:${TENANT}`
      ? tenantDidDocument(TENANT, [
          { id: 'k1', publicKeyMultibase: CA_KEY, status: 'active', resolvableUntil: null },
        ])
      : null;
  });

  async function rejection(url: string): Promise<unknown> {
    return loader(url).then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  it('serves the committed contexts as static documents', async () => {
    for (const [uri, { document }] of loadContexts()) {
      await expect(loader(uri)).resolves.toEqual({
        contextUrl: null,
        documentUrl: uri,
        document,
        tag: 'static',
      });
    }
  });

  it('computes did:key documents and dereferences their verification method', async () => {
    const did = `did:key:${AGENT_KEY}`;
    expect((await loader(did)).document).toEqual(didKeyDocument(AGENT_KEY));
    expect((await loader(`${did}#${AGENT_KEY}`)).document).toEqual({
      '@context': [CONTEXT_URIS.didV1, CONTEXT_URIS.ed25519V1],
      id: `${did}#${AGENT_KEY}`,
      type: 'Ed25519VerificationKey2020',
      controller: did,
      publicKeyMultibase: AGENT_KEY,
    });
    expect(lookups).toEqual([]);
  });

  it('resolves did:svc through the lookup, fragment included', async () => {
    const did = `did:svc:${TENANT}`;
    expect((await loader(did)).document).toMatchObject({
      id: did,
      assertionMethod: [`${did}#agentiam-ca`],
    });
    expect((await loader(`${did}#agentiam-ca`)).document).toMatchObject({
      id: `${did}#agentiam-ca`,
      controller: did,
      publicKeyMultibase: CA_KEY,
    });
    expect(lookups).toEqual([did, did]);
  });

  it('refuses everything else, fetching nothing', async () => {
    const refused = [
      'https://www.w3.org/2018/credentials/examples/v1',
      'https://w3id.org/security/v2',
      'https://example.com/',
      'did:svc:another-tenant',
      `did:svc:${TENANT}#agentiam-ca-unknown`,
      `did:key:${AGENT_KEY}#${CA_KEY}`,
      'did:key:z6MkNotAKey',
      'did:web:example.com',
      'urn:uuid:7b0b6a0e-0000-4000-8000-000000000000',
    ];
    for (const url of refused) {
      const error = await rejection(url);
      expect(error, url).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code, url).toBe('NOT_FOUND');
    }
  });
});
