// The public documents a third-party verifier needs besides DIDs: the JSON-LD contexts our
// credentials name (GET /contexts/{file}, the committed files of schema/contexts/, identical on
// every process and version: cached for a day) and the tenants' signed revocation status lists
// (GET /api/v1/agentiam/status-lists/{id}, from the snapshot or a newer kill delta; `no-cache` so verifiers revalidate
// with If-None-Match on every check and see a revocation at once, and the ETag changes with the
// list's version). Unknown names are the registry's 404 NOT_FOUND.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../../http-edge/errors.js';
import { contextFile } from '../../../shared/agentiam/contexts.js';
import { gatewayError } from '../../../shared/errors/index.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { notModified } from './http-cache.js';

export const CONTEXT_PATH = '/contexts/:file';
export const STATUS_LIST_PATH = '/api/v1/agentiam/status-lists/:id';

const JSON_LD = 'application/ld+json';
const CONTEXT_CACHE_CONTROL = 'public, max-age=86400';

/** Context files with their ETag, by file name: computed on first request. */
const servedContexts = new Map<string, { readonly body: Buffer; readonly etag: string }>();

export function serveContext(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const file = (request.params as { file: string }).file;
  let served = servedContexts.get(file);
  if (served === undefined) {
    const context = contextFile(file);
    if (context === undefined) {
      return sendError(reply, gatewayError('NOT_FOUND', { resource: `context ${file}` }));
    }
    const body = Buffer.from(context.text, 'utf8');
    served = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
    servedContexts.set(file, served);
  }
  reply.header('etag', served.etag).header('cache-control', CONTEXT_CACHE_CONTROL);
  if (notModified(request, served.etag)) return reply.code(304).send();
  // Bytes: the media type goes out exactly as written (Fastify adds a charset to JSON text).
  return reply.code(200).header('content-type', JSON_LD).send(served.body);
}

export function serveStatusList(
  store: SnapshotStore,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const id = (request.params as { id: string }).id;
  // A list re-signed by a kill is served at once, before the snapshot carrying it.
  const list = store.statusListById(id);
  if (list === undefined) {
    return sendError(reply, gatewayError('NOT_FOUND', { resource: `status list ${id}` }));
  }
  reply.header('etag', list.etag).header('cache-control', 'no-cache');
  if (notModified(request, list.etag)) return reply.code(304).send();
  return reply.code(200).header('content-type', JSON_LD).send(list.body);
}
