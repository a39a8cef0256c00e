// The configuration stream of the control plane (docs/config-push.md):
//   GET  /api/v1/control-plane/config-stream?since=<version>&epoch=<epoch>&name=<data plane>
//        &kills=<kill cursor>
//        Server-Sent Events: `snapshot` (the full JSON snapshot, id `<epoch>:<version>`) when the
//        client is behind and on every new version, `kill` (a kill delta, id `kill:<seq>`) for
//        every kill after the cursor before anything else, then as kills commit, `heartbeat`
//        every 15 s (and once right after the catch-up: the client is then caught up).
//   POST /api/v1/control-plane/data-planes/ack { version } | { kill, aborted } |
//        { decisions, report_id }: the snapshot version, or the kill delta, the data plane
//        applied; or the decisions it counted since its last report (sent after each heartbeat),
//        added to decision_counts once per report id.
// Both authenticate the data-plane credential (`Authorization: Bearer agdp_…`), not an API key.
// A credential revoked while its stream is open (`data-plane revoke`, possibly from another
// process) is noticed by a sweep every heartbeat period: one query over the connected data
// planes, and their streams are ended; reconnecting is then refused.
import type { FastifyInstance } from 'fastify';
import {
  CONFIG_STREAM_PATH,
  DATA_PLANE_ACK_PATH,
  DECISION_REPORT_ID_PATTERN,
  type DecisionReport,
  PUBLIC_URL_HEADER,
} from '../../shared/config-stream/protocol.js';
import {
  DECISION_OUTCOMES,
  MAX_DECISION_NAME_LENGTH,
  MAX_DECISION_REPORT_ROWS,
} from '../../shared/decisions/decision-counts.js';
import type { PublicUrl } from '../../shared/public-url.js';
import { BODY_FIELD, invalidField } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';
import { writeDecisionCounts } from '../../storage/tables/decision-counts.js';
import { readKillDeltasAfter } from '../../storage/tables/kill-deltas.js';
import { authenticateDataPlane, findRevokedDataPlanes } from './credentials.js';
import type { ConfigStreamHub } from './hub.js';
import { formatSseComment } from './sse.js';

export interface ConfigStreamPluginOptions {
  readonly db: Database;
  readonly hub: ConfigStreamHub;
  /** Sent on every stream (PUBLIC_URL_HEADER): a data plane configured otherwise stops. */
  readonly publicUrl: PublicUrl;
  /** How often open streams are checked for a revoked credential (default: the heartbeat). */
  readonly revocationCheckMs?: number;
}

interface StreamQuery {
  since?: number;
  epoch?: string;
  name?: string;
  kills?: number;
}

type AckBody = { version: number } | { kill: number; aborted: number } | DecisionReport;

const NAME = { type: 'string', maxLength: MAX_DECISION_NAME_LENGTH } as const;
/** One DecisionCountRow, every field required, nothing else (see the body's propertyNames). */
const DECISION_ROW = {
  type: 'object',
  required: ['tenantId', 'minute', 'outcome', 'serverId', 'toolName', 'reasonCode', 'count'],
  propertyNames: {
    enum: ['tenantId', 'minute', 'outcome', 'serverId', 'toolName', 'reasonCode', 'count'],
  },
  properties: {
    tenantId: { type: 'string', minLength: 1, maxLength: MAX_DECISION_NAME_LENGTH },
    minute: { type: 'integer', minimum: 0, maximum: 8_640_000_000_000_000, multipleOf: 60_000 },
    outcome: { type: 'string', enum: [...DECISION_OUTCOMES] },
    serverId: NAME,
    toolName: NAME,
    reasonCode: { type: 'string', pattern: '^[A-Z0-9_]{0,100}$' },
    count: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  },
} as const;

export async function configStreamPlugin(
  app: FastifyInstance,
  options: ConfigStreamPluginOptions,
): Promise<void> {
  const { db, hub } = options;
  /** Open streams by data-plane id, so a revocation can end them. */
  const open = new Map<string, Set<() => void>>();
  let sweeping = false;
  const sweep = async () => {
    if (sweeping || open.size === 0) return;
    sweeping = true;
    try {
      for (const id of await findRevokedDataPlanes(db, [...open.keys()])) {
        for (const end of open.get(id) ?? []) end();
        open.delete(id);
        app.log.warn({ dataPlaneId: id }, 'data-plane credential revoked; stream closed');
      }
    } catch (error) {
      app.log.warn({ err: error }, 'data-plane revocation check failed');
    } finally {
      sweeping = false;
    }
  };
  // Every heartbeat period (AGENT_GATEWAY_STREAM_HEARTBEAT_MS): a revoked data plane is cut off
  // within one period, and its reconnection is refused (it then stops deciding).
  const sweeper = setInterval(() => void sweep(), options.revocationCheckMs ?? hub.heartbeatMs);
  sweeper.unref();
  // Open streams would keep the server from closing: end them first (clients resume elsewhere).
  app.addHook('preClose', async () => {
    clearInterval(sweeper);
    hub.close();
  });

  app.get<{ Querystring: StreamQuery }>(
    CONFIG_STREAM_PATH,
    {
      schema: {
        summary: 'Configuration snapshots for a data plane (Server-Sent Events)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            since: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
            epoch: { type: 'string', pattern: '^[0-9a-f]{0,32}$' },
            name: { type: 'string', minLength: 1, maxLength: 200 },
            kills: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          },
        },
      },
    },
    async (request, reply) => {
      const plane = await authenticateDataPlane(
        db,
        request.headers.authorization,
        request.query.name,
      );
      const now = new Date();
      const userAgent = request.headers['user-agent'];
      await db.prisma.dataPlane.update({
        where: { id: plane.id },
        data: {
          connectedAt: now,
          lastSeenAt: now,
          address: request.ip,
          softwareVersion: userAgent ? userAgent.slice(0, 200) : null,
        },
      });
      const since = request.query.since ?? 0;
      const cursor = request.query.kills;
      request.log.info({ dataPlane: plane.name, since, kills: cursor }, 'data plane connected');
      // The kills it missed, read from the table (not the hub's memory: it may have missed them
      // while this control plane was down). A client without a snapshot gets the current one
      // next, which includes every kill through its killsThrough.
      const catchUp =
        cursor === undefined
          ? undefined
          : () => {
              const read = readKillDeltasAfter(
                db,
                since === 0 ? Math.max(cursor, hub.killsThrough) : cursor,
              );
              read.catch((error: unknown) => {
                request.log.warn(
                  { err: error, dataPlane: plane.name },
                  'kill catch-up read failed',
                );
              });
              return read;
            };
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        [PUBLIC_URL_HEADER]: options.publicUrl.get(),
      });
      res.write(formatSseComment(`agent-gateway config stream, epoch ${hub.epoch}`));
      const disconnect = hub.connect(
        {
          send: (text) => res.write(text),
          backlog: () => res.writableLength,
          end: () => res.end(),
        },
        since,
        request.query.epoch ?? '',
        { dataPlane: plane, ...(catchUp ? { catchUp } : {}) },
      );
      const end = () => res.end();
      const ends = open.get(plane.id) ?? new Set<() => void>();
      open.set(plane.id, ends);
      ends.add(end);
      res.on('close', () => {
        ends.delete(end);
        if (ends.size === 0 && open.get(plane.id) === ends) open.delete(plane.id);
        disconnect();
        request.log.info({ dataPlane: plane.name }, 'data plane disconnected');
      });
    },
  );

  app.post<{ Body: AckBody }>(
    DATA_PLANE_ACK_PATH,
    {
      schema: {
        summary:
          'A data plane reports the snapshot version or the kill delta it applied, or its decision counts',
        body: {
          type: 'object',
          // Not additionalProperties: the server's validator would strip unknown fields silently.
          propertyNames: { enum: ['version', 'kill', 'aborted', 'decisions', 'report_id'] },
          properties: {
            version: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
            kill: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
            aborted: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
            decisions: { type: 'array', maxItems: MAX_DECISION_REPORT_ROWS, items: DECISION_ROW },
            report_id: { type: 'string', pattern: DECISION_REPORT_ID_PATTERN },
          },
          // Exactly one kind: with propertyNames closed, the count of properties rules out mixes.
          oneOf: [
            { required: ['version'], maxProperties: 1 },
            { required: ['kill', 'aborted'], maxProperties: 2 },
            {
              required: ['decisions'],
              not: {
                anyOf: [
                  { required: ['version'] },
                  { required: ['kill'] },
                  { required: ['aborted'] },
                ],
              },
            },
          ],
        },
        response: {
          200: {
            type: 'object',
            properties: {
              version: { type: 'integer' },
              kill: { type: 'integer' },
              decisions: { type: 'integer' },
              replayed: { type: 'boolean' },
            },
          },
        },
      },
    },
    async (request) => {
      const plane = await authenticateDataPlane(db, request.headers.authorization);
      const body = request.body;
      if ('kill' in body) {
        // The kill path: hand it to the waiting fan-out at once; the stream's lastSeenAt is
        // kept by snapshot acknowledgements and connects.
        hub.acknowledgeKill(plane.id, body.kill, body.aborted);
        request.log.info(
          { dataPlane: plane.name, kill: body.kill, aborted: body.aborted },
          'data plane applied kill',
        );
        return { kill: body.kill };
      }
      if ('decisions' in body) {
        // Counted by that data plane; rows of tenants that no longer exist are dropped. A report
        // written before (its answer was lost, so the data plane sent it again) adds nothing.
        const added = await writeDecisionCounts(db, plane.id, body.decisions, {
          reportId: body.report_id,
        });
        request.log[added ? 'debug' : 'info'](
          { dataPlane: plane.name, rows: body.decisions.length, reportId: body.report_id ?? null },
          added
            ? 'data plane reported decision counts'
            : 'decision report already written; not counted again',
        );
        return { decisions: body.decisions.length, replayed: !added };
      }
      if (!('version' in body)) {
        throw invalidField(BODY_FIELD, 'must be {version}, {kill, aborted} or {decisions}');
      }
      const { version } = body;
      await db.prisma.dataPlane.update({
        where: { id: plane.id },
        data: { appliedSnapshotVersion: version, lastSeenAt: new Date() },
      });
      request.log.info({ dataPlane: plane.name, version }, 'data plane applied snapshot');
      return { version };
    },
  );
}
