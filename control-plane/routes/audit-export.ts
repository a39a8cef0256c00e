// GET /api/v1/audit/export (scope audit:read): the caller's tenant's audit trail in the export
// format `agent-gateway audit verify` and the open NPL verifier read — a JSON array, oldest
// first, streamed page by page from the database (storage/tables/audit-export.ts), so an auditor with an
// API key (or the console's download button) gets a verifiable file without database access.
// Optional `from`/`to` (RFC 3339; `to` exclusive) select a slice, which verifies with
// `--partial`. The chain head at the moment the export was opened is in the answer's headers,
// so a later export can be checked to continue it (`--after <hash>`).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { formatAuditExport, inChunksOf } from '../../shared/audit/index.js';
import { errorBodySchema } from '../../shared/errors/index.js';
import { SCOPES } from '../../shared/identity/scopes.js';
import { invalidField } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';
import { openAuditExport } from '../../storage/tables/audit-export.js';
import type { Caller } from '../graphql/context.js';
import { scopedCaller } from './scoped-caller.js';

export const AUDIT_EXPORT_PATH = '/api/v1/audit/export';

export interface AuditExportDependencies {
  readonly db: Database;
  readonly authenticate: (authorization: string | undefined) => Caller;
}

interface ExportQuery {
  readonly from?: string;
  readonly to?: string;
}

function instant(name: 'from' | 'to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw invalidField(name, 'must be an RFC 3339 date-time (2026-11-27T10:00:00Z)');
  }
  return date;
}

export async function auditExportRoutes(
  app: FastifyInstance,
  deps: AuditExportDependencies,
): Promise<void> {
  const reader = scopedCaller(deps.authenticate, SCOPES.AUDIT_READ);
  app.get<{ Querystring: ExportQuery }>(
    AUDIT_EXPORT_PATH,
    {
      onRequest: reader.onRequest,
      config: { docs: 'docs/audit-storage.md#exporting' },
      schema: {
        operationId: 'exportAuditTrail',
        summary: "The tenant's audit trail as a verifiable export (agent-gateway audit verify).",
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            from: {
              type: 'string',
              format: 'date-time',
              description: 'Only entries created at or after this instant.',
            },
            to: {
              type: 'string',
              format: 'date-time',
              description: 'Only entries created before this instant (exclusive).',
            },
          },
        },
        response: {
          200: {
            description:
              'A JSON array of audit entries, oldest first (docs/audit.md). Headers: ' +
              'x-audit-head-seq and x-audit-head-hash (the chain head when the export was ' +
              'opened), x-audit-slice (true when from/to select a slice: verify with --partial).',
            content: {
              'application/json': { schema: { type: 'array', items: { type: 'object' } } },
            },
          },
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = reader.callerOf(request);
      const from = instant('from', request.query.from);
      const to = instant('to', request.query.to);
      if (from && to && from >= to) {
        throw invalidField('from', 'must be before to');
      }
      // The tenant is the key's, by id: never one the client names.
      const trail = await openAuditExport(deps.db, { tenant: tenantId, from, to });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      return reply
        .headers({
          'content-type': 'application/json; charset=utf-8',
          'content-disposition': `attachment; filename="audit-${trail.tenantName}-${stamp}.json"`,
          'cache-control': 'no-store',
          'x-audit-head-seq': String(trail.head.seq),
          'x-audit-head-hash': trail.head.hash,
          'x-audit-slice': String(trail.filtered),
        })
        .send(Readable.from(inChunksOf(formatAuditExport(trail))));
    },
  );
}
