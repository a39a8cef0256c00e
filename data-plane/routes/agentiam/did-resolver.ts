// GET /1.0/identifiers/{did} — the DIF Universal Resolver HTTP binding (W3C DID Resolution),
// public: a verifier anywhere resolves the tenant CA (`did:svc:<tenantId>`, from the snapshot:
// public keys only, no other tenant data) and agents' `did:key` (computed from the key).
//
// Representations: the DID resolution result (`application/ld+json;profile=…did-resolution`) by
// default; the bare DID document for `Accept: application/did+ld+json` or `application/did+json`.
// Errors are resolution results too, with `didResolutionMetadata.error`: 400 invalidDid (not a
// DID we can read), 404 notFound (no such tenant, or a tenant without a CA key yet), 501
// methodNotSupported (another DID method). Answers carry an ETag (SHA-256 of the body) and are
// cacheable: tenant documents for 5 minutes (keys rotate), did:key documents for a day. The
// router reads at most 100 characters of the DID (did:svc:<uuid> is 44, did:key:z6Mk… 56): a
// longer one is the edge's 400 REQUEST_INVALID.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { didKeyDocument, parseDid } from '../../../shared/agentiam/dids.js';
import { type GatewayError, gatewayError } from '../../../shared/errors/index.js';
import { didDocumentAt } from '../../store/compile-identity.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { notModified } from './http-cache.js';

export const DID_RESOLVER_PATH = '/1.0/identifiers/:did';

const RESOLUTION_CONTEXT = 'https://w3id.org/did-resolution/v1';
export const RESOLUTION_MEDIA_TYPE =
  'application/ld+json;profile="https://w3id.org/did-resolution"';
export const DID_LD_JSON = 'application/did+ld+json';
export const DID_JSON = 'application/did+json';
const TENANT_CACHE_CONTROL = 'public, max-age=300';
const KEY_CACHE_CONTROL = 'public, max-age=86400';
/** `did:<method>:<method-specific id>` (W3C DID Core §3.1), to tell other methods from junk. */
const DID_SYNTAX = /^did:[a-z0-9]+:[A-Za-z0-9._%:-]*[A-Za-z0-9._-]$/;

type Representation = typeof RESOLUTION_MEDIA_TYPE | typeof DID_LD_JSON | typeof DID_JSON;

interface Rendered {
  /** Bytes, so the media type goes out exactly as written (no charset added). */
  readonly body: Buffer;
  readonly etag: string;
}

/** Each document's rendered answers, per representation: computed once per snapshot. */
const renderedByDocument = new WeakMap<object, Map<Representation, Rendered>>();

export function resolveDid(
  store: SnapshotStore,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const did = (request.params as { did: string }).did;
  const representation = chooseRepresentation(request.headers.accept);
  reply.header('vary', 'Accept');
  const parsed = parseDid(did);
  if (parsed === null) {
    if (DID_SYNTAX.test(did) && !did.startsWith('did:svc:') && !did.startsWith('did:key:')) {
      return sendFailure(
        reply,
        'methodNotSupported',
        gatewayError('DID_METHOD_NOT_SUPPORTED', { did }),
        501,
      );
    }
    return sendFailure(reply, 'invalidDid', invalidDid('is not a did:svc or did:key DID'));
  }
  let document: Readonly<Record<string, unknown>> | null;
  if (parsed.method === 'key') {
    document = didKeyDocument(parsed.publicKeyMultibase);
    reply.header('cache-control', KEY_CACHE_CONTROL);
  } else {
    const identity = store.current?.tenants.get(parsed.tenantId)?.identity;
    document = identity ? didDocumentAt(identity, Date.now()) : null;
    reply.header('cache-control', TENANT_CACHE_CONTROL);
  }
  if (document === null) {
    return sendFailure(reply, 'notFound', gatewayError('NOT_FOUND', { resource: `DID ${did}` }));
  }
  const rendered = render(document, representation);
  reply.header('etag', rendered.etag);
  if (notModified(request, rendered.etag)) return reply.code(304).send();
  return reply.code(200).header('content-type', representation).send(rendered.body);
}

function render(document: Readonly<Record<string, unknown>>, as: Representation): Rendered {
  let byRepresentation = renderedByDocument.get(document);
  if (byRepresentation === undefined) {
    byRepresentation = new Map();
    renderedByDocument.set(document, byRepresentation);
  }
  let rendered = byRepresentation.get(as);
  if (rendered === undefined) {
    const text = JSON.stringify(
      as === RESOLUTION_MEDIA_TYPE
        ? {
            '@context': RESOLUTION_CONTEXT,
            didDocument: document,
            didResolutionMetadata: { contentType: DID_LD_JSON },
            didDocumentMetadata: {},
          }
        : document,
    );
    const body = Buffer.from(text, 'utf8');
    rendered = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
    byRepresentation.set(as, rendered);
  }
  return rendered;
}

function invalidDid(problem: string): GatewayError {
  return gatewayError('REQUEST_INVALID', { problem: `the DID ${problem}` });
}

function sendFailure(
  reply: FastifyReply,
  error: 'invalidDid' | 'notFound' | 'methodNotSupported',
  cause: GatewayError,
  status = cause.status ?? 500,
): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-type', RESOLUTION_MEDIA_TYPE)
    .send(
      Buffer.from(
        JSON.stringify({
          '@context': RESOLUTION_CONTEXT,
          didDocument: null,
          didResolutionMetadata: {
            error,
            errorMessage: cause.message,
            reasonCode: cause.code,
          },
          didDocumentMetadata: {},
        }),
      ),
    );
}

/**
 * The representation the Accept header prefers among ours (highest q, then header order); the
 * resolution result when it names none of them (`*∕*`, `application/json`, a browser's list).
 */
export function chooseRepresentation(accept: string | undefined): Representation {
  if (accept === undefined) return RESOLUTION_MEDIA_TYPE;
  let best: Representation = RESOLUTION_MEDIA_TYPE;
  let bestQ = 0;
  // Bounded: a header of thousands of ranges is read only as far as the first 32.
  const ranges = accept.split(',', 32);
  for (const range of ranges) {
    const [type = '', ...parameters] = range.split(';');
    const mediaType = type.trim().toLowerCase();
    let candidate: Representation | undefined;
    if (mediaType === DID_LD_JSON) candidate = DID_LD_JSON;
    else if (mediaType === DID_JSON) candidate = DID_JSON;
    else if (mediaType === 'application/ld+json') candidate = RESOLUTION_MEDIA_TYPE;
    if (candidate === undefined) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=');
      if (name?.trim().toLowerCase() === 'q') q = Number(value);
    }
    if (Number.isFinite(q) && q > bestQ) {
      best = candidate;
      bestQ = q;
    }
  }
  return best;
}
