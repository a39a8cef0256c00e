// The offline JSON-LD document loader `delegate` signs with. Nothing is fetched: the JSON-LD
// contexts are the package's own copies in contexts/ (byte for byte the gateway's
// schema/contexts/, served at GET /contexts/<file>), did:key documents are computed from the
// key, and any other URL is refused. A context decides what a signed term means, so it is
// pinned, never downloaded at signing time.
import { readFile } from 'node:fs/promises';
import { CONTEXTS } from './credential.js';
import { DelegationError } from './errors.js';
import { ed25519PublicKeyBytes } from './keys.js';

/** What jsonld.js expects of a document loader. */
export type OfflineDocumentLoader = (url: string) => Promise<{
  contextUrl: null;
  documentUrl: string;
  document: object;
  tag?: 'static';
}>;

// The package root's contexts/, from src/delegation/ and dist/delegation/ alike.
const CONTEXTS_DIRECTORY = new URL('../../contexts/', import.meta.url);
let contexts: Promise<ReadonlyMap<string, object>> | undefined;

/** The package's contexts, by URI, read once from contexts/ (index.json maps URI → file). */
function packageContexts(): Promise<ReadonlyMap<string, object>> {
  contexts ??= (async () => {
    const read = async (file: string) =>
      JSON.parse(await readFile(new URL(file, CONTEXTS_DIRECTORY), 'utf8')) as unknown;
    const index = (await read('index.json')) as Record<string, string>;
    const entries = await Promise.all(
      Object.entries(index).map(
        async ([uri, file]) => [uri, (await read(file)) as object] as const,
      ),
    );
    return new Map(entries);
  })();
  return contexts;
}

/**
 * The loader `delegate` signs with, for verifying delegations with Digital Bazaar's libraries
 * too: the package's own contexts and did:key documents computed from the key. It never touches
 * the network; any other URL (another context, a did:svc, an https document) is refused with
 * DOCUMENT_NOT_AVAILABLE.
 */
export const offlineDocumentLoader: OfflineDocumentLoader = async (url) => {
  const context = (await packageContexts()).get(url);
  if (context !== undefined) {
    // 'static' lets jsonld.js cache the processed context: these never change.
    return { contextUrl: null, documentUrl: url, document: context, tag: 'static' };
  }
  const document = didKeyDocument(url);
  if (document === null) {
    throw new DelegationError(
      'DOCUMENT_NOT_AVAILABLE',
      `${url} is not available offline: only the package's JSON-LD contexts and did:key documents load`,
    );
  }
  return { contextUrl: null, documentUrl: url, document };
};

/** The did:key document of `did:key:z6Mk…`, or its one verification method for `…#z6Mk…`. */
function didKeyDocument(url: string): object | null {
  if (!url.startsWith('did:key:')) return null;
  const [did = '', fragment] = url.split('#', 2);
  const key = did.slice('did:key:'.length);
  if (ed25519PublicKeyBytes(key) === null) return null;
  const methodId = `${did}#${key}`;
  if (fragment !== undefined && fragment !== key) return null;
  const method = {
    id: methodId,
    type: 'Ed25519VerificationKey2020',
    controller: did,
    publicKeyMultibase: key,
  };
  const context = [CONTEXTS.didV1, CONTEXTS.ed25519V1];
  if (fragment !== undefined) return { '@context': context, ...method };
  return {
    '@context': context,
    id: did,
    verificationMethod: [method],
    authentication: [methodId],
    assertionMethod: [methodId],
    capabilityDelegation: [methodId],
    capabilityInvocation: [methodId],
  };
}
