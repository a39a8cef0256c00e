// The JSON-LD document loader for signing and verifying AgentIAM credentials. It never touches the
// network: contexts come from the committed copies (contexts.ts), did:key documents are computed
// from the key, did:svc documents come from the injected lookup (the tenant CA keys of the
// snapshot or the database), and a DID URL with a fragment resolves to that verification method
// node. Anything else throws, which fails the signature or verification that asked for it.
import type { JsonLdDocumentLoader } from '@digitalbazaar/vc';
import { gatewayError } from '../errors/index.js';
import { loadContexts } from './contexts.js';
import { didKeyDocument, parseDid } from './dids.js';

/** The DID document of a did:svc DID, or null when no tenant has it. */
export type DidDocumentLookup = (did: string) => Record<string, unknown> | null;

export type DocumentLoader = JsonLdDocumentLoader;

export function createDocumentLoader(lookup: DidDocumentLookup): DocumentLoader {
  const contexts = loadContexts();
  return async (url) => {
    const context = contexts.get(url);
    // 'static' lets jsonld.js cache the processed context across calls (contexts never change).
    if (context !== undefined) {
      return { contextUrl: null, documentUrl: url, document: context.document, tag: 'static' };
    }
    const document = resolveDidUrl(url, lookup);
    if (document === null) {
      throw gatewayError('NOT_FOUND', {
        resource: `JSON-LD document ${url} (only our contexts and did:svc/did:key resolve)`,
      });
    }
    return { contextUrl: null, documentUrl: url, document };
  };
}

function resolveDidUrl(url: string, lookup: DidDocumentLookup): Record<string, unknown> | null {
  const hash = url.indexOf('#');
  const did = hash === -1 ? url : url.slice(0, hash);
  const parsed = parseDid(did);
  if (parsed === null) return null;
  const document =
    parsed.method === 'key' ? didKeyDocument(parsed.publicKeyMultibase) : lookup(did);
  if (document === null || hash === -1) return document;
  const methods = document.verificationMethod;
  if (!Array.isArray(methods)) return null;
  const method = methods.find(
    (node: unknown) => typeof node === 'object' && node !== null && 'id' in node && node.id === url,
  ) as Record<string, unknown> | undefined;
  // The node alone has no context: give it the document's, as DID resolvers do when dereferencing.
  return method === undefined ? null : { '@context': document['@context'], ...method };
}
