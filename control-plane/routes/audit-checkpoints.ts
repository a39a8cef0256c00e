// The anchored audit trail over REST (docs/audit.md, "Checkpoints"):
// - GET  /api/v1/audit/checkpoint: the caller's tenant's latest signed checkpoint, the C2SP signed
//   note itself (text/plain); POST cuts one now over every committed entry and answers it;
// - GET  /api/v1/audit/proof/inclusion?entry_id=&tree_size=, and
//   GET  /api/v1/audit/proof/consistency?first=&second=: RFC 9162 proofs as JSON (base64 hashes);
// - GET  /api/v1/audit/checkpoint/key: public, like a JWKS: the audit verifier keys in the
//   signed-note format, the active one first, one per line.
// All but the key need an API key with audit:read; the tenant is always the key's.
import type { FastifyInstance } from 'fastify';
import { errorBodySchema, gatewayError } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import type { Database } from '../../storage/engine/database.js';
import { servedNote } from '../../storage/tables/audit-checkpoints.js';
import { type AuditCheckpointer, requireLatestCheckpoint } from '../audit/checkpointer.js';
import { auditConsistencyProof, auditInclusionProof } from '../audit/proofs.js';
import { listAuditSigningKeys } from '../audit/signing-key.js';
import type { Caller } from '../graphql/context.js';
import { scopedCaller } from './scoped-caller.js';

export const AUDIT_CHECKPOINT_PATH = '/api/v1/audit/checkpoint';
export const AUDIT_CHECKPOINT_KEY_PATH = '/api/v1/audit/checkpoint/key';
export const AUDIT_INCLUSION_PROOF_PATH = '/api/v1/audit/proof/inclusion';
export const AUDIT_CONSISTENCY_PROOF_PATH = '/api/v1/audit/proof/consistency';

export interface AuditCheckpointDependencies {
  readonly db: Database;
  readonly authenticate: (authorization: string | undefined) => Caller;
  readonly auditCheckpoints?: Pick<AuditCheckpointer, 'cut'> | undefined;
}

const DOCS = 'docs/audit.md#checkpoints';
const NOTE = { 'text/plain': { schema: { type: 'string' } } };
const SIGNED_NOTE = {
  description: 'The signed note; x-audit-tree-size is its tree size.',
  content: NOTE,
};
/** A tree size in a query string: a positive decimal integer. */
const TREE_SIZE = { type: 'string', pattern: '^[1-9][0-9]{0,15}$' } as const;
/** What a proof route answers besides its proof. */
const PROOF_ERRORS = {
  400: errorBodySchema,
  401: errorBodySchema,
  403: errorBodySchema,
  404: errorBodySchema,
};
const PROOF_HASHES = {
  type: 'array',
  items: { type: 'string', description: 'A SHA-256 hash, base64.' },
  description: 'The proof, in RFC 9162 order.',
} as const;

export async function auditCheckpointRoutes(
  app: FastifyInstance,
  deps: AuditCheckpointDependencies,
): Promise<void> {
  const reader = scopedCaller(deps.authenticate, SCOPES.AUDIT_READ);
  const sendNote = (reply: import('fastify').FastifyReply, note: string, treeSize: number) =>
    reply
      .headers({
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'x-audit-tree-size': String(treeSize),
      })
      .send(note);

  app.get(
    AUDIT_CHECKPOINT_PATH,
    {
      onRequest: reader.onRequest,
      config: { docs: DOCS },
      schema: {
        operationId: 'getAuditCheckpoint',
        summary: "The tenant's latest signed audit checkpoint (a C2SP signed note).",
        response: {
          200: SIGNED_NOTE,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = reader.callerOf(request);
      const latest = await requireLatestCheckpoint(deps.db, tenantId);
      return sendNote(reply, servedNote(latest), latest.treeSize);
    },
  );

  app.post(
    AUDIT_CHECKPOINT_PATH,
    {
      onRequest: reader.onRequest,
      config: { docs: DOCS },
      schema: {
        operationId: 'cutAuditCheckpoint',
        summary:
          "Cuts the tenant's audit checkpoint now over every committed entry and answers it.",
        response: {
          200: SIGNED_NOTE,
          401: errorBodySchema,
          403: errorBodySchema,
          503: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = reader.callerOf(request);
      if (deps.auditCheckpoints === undefined) {
        throw gatewayError('AUDIT_CHECKPOINT_UNAVAILABLE', {
          reason: 'this process does not cut checkpoints',
        });
      }
      const checkpoint = await deps.auditCheckpoints.cut(tenantId);
      return sendNote(reply, servedNote(checkpoint), checkpoint.treeSize);
    },
  );

  app.get(
    AUDIT_CHECKPOINT_KEY_PATH,
    {
      config: { docs: DOCS },
      schema: {
        operationId: 'getAuditVerifierKeys',
        summary:
          'The audit verifier keys (signed-note format), the active one first, one per line. Public.',
        response: {
          200: { description: 'One verifier key per line.', content: NOTE },
          500: errorBodySchema,
        },
      },
    },
    async (_request, reply) => {
      const keys = await listAuditSigningKeys(deps.db);
      return reply
        .headers({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=60' })
        .send(keys.map((key) => `${key.verifierKey}\n`).join(''));
    },
  );

  app.get<{ Querystring: { entry_id: string; tree_size: string } }>(
    AUDIT_INCLUSION_PROOF_PATH,
    {
      onRequest: reader.onRequest,
      config: { docs: DOCS },
      schema: {
        operationId: 'getAuditInclusionProof',
        summary: "An entry's inclusion proof in the tenant's audit tree of a given size.",
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['entry_id', 'tree_size'],
          properties: {
            entry_id: {
              type: 'string',
              minLength: 1,
              maxLength: 200,
              description: "The entry's id.",
            },
            tree_size: { ...TREE_SIZE, description: "A tree size up to the latest checkpoint's." },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['treeSize', 'leafIndex', 'hashes'],
            properties: {
              treeSize: { type: 'integer' },
              leafIndex: { type: 'integer', description: "0-based: the entry's seq - 1." },
              hashes: PROOF_HASHES,
            },
          },
          ...PROOF_ERRORS,
        },
      },
    },
    async (request) => {
      const { tenantId } = reader.callerOf(request);
      const { entry_id: entryId, tree_size: treeSize } = request.query;
      return auditInclusionProof(deps.db, tenantId, entryId, Number(treeSize));
    },
  );

  app.get<{ Querystring: { first: string; second: string } }>(
    AUDIT_CONSISTENCY_PROOF_PATH,
    {
      onRequest: reader.onRequest,
      config: { docs: DOCS },
      schema: {
        operationId: 'getAuditConsistencyProof',
        summary: "The consistency proof between two sizes of the tenant's audit tree.",
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['first', 'second'],
          properties: {
            first: { ...TREE_SIZE, description: 'The smaller tree size (at least 1).' },
            second: {
              ...TREE_SIZE,
              description: "The larger, up to the latest checkpoint's size.",
            },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['treeSize', 'first', 'second', 'hashes'],
            properties: {
              treeSize: { type: 'integer', description: 'The larger tree size (second).' },
              first: { type: 'integer' },
              second: { type: 'integer' },
              hashes: PROOF_HASHES,
            },
          },
          ...PROOF_ERRORS,
        },
      },
    },
    async (request) => {
      const { tenantId } = reader.callerOf(request);
      return auditConsistencyProof(
        deps.db,
        tenantId,
        Number(request.query.first),
        Number(request.query.second),
      );
    },
  );
}
