// The configuration stream of the control plane (docs/config-push.md):
//   GET  /api/v1/control-plane/config-stream?since=<version>&epoch=<epoch>&name=<data plane>
//        Server-Sent Events: `snapshot` (the full JSON snapshot, id `<epoch>:<version>`) when the
//        client is behind and on every new version, `heartbeat` every 15 s.
//   POST /api/v1/control-plane/data-planes/ack { version }: the version the data plane applied.
// Both authenticate the data-plane credential (`Authorization: Bearer agdp_…`), not an API key.
// A credential revoked while its stream is open (`data-plane revoke`, possibly from another
// process) is noticed by a sweep every heartbeat period: one query over the connected data
// planes, and their streams are ended; reconnecting is then refused.
import type { FastifyInstance } from 'fastify';
import {
  CONFIG_STREAM_PATH,
  DATA_PLANE_ACK_PATH,
  HEARTBEAT_INTERVAL_MS,
} from '../../shared/config-stream/protocol.js';
import type { Database } from '../../storage/database.js';
import { authenticateDataPlane, findRevokedDataPlanes } from './credentials.js';
import type { ConfigStreamHub } from './hub.js';
import { formatSseComment } from './sse.js';

export interface ConfigStreamPluginOptions {
  readonly db: Database;
  readonly hub: ConfigStreamHub;
  /** How often open streams are checked for a revoked credential (default: the heartbeat). */
  readonly revocationCheckMs?: number;
}

interface StreamQuery {
  since?: number;
  epoch?: string;
  name?: string;
}

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
  const sweeper = setInterval(
    () => void sweep(),
    options.revocationCheckMs ?? HEARTBEAT_INTERVAL_MS,
  );
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
      request.log.info({ dataPlane: plane.name, since }, 'data plane connected');
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
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

  app.post<{ Body: { version: number } }>(
    DATA_PLANE_ACK_PATH,
    {
      schema: {
        summary: 'A data plane reports the snapshot version it applied',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['version'],
          properties: { version: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['version'],
            properties: { version: { type: 'integer' } },
          },
        },
      },
    },
    async (request) => {
      const plane = await authenticateDataPlane(db, request.headers.authorization);
      const { version } = request.body;
      await db.prisma.dataPlane.update({
        where: { id: plane.id },
        data: { appliedSnapshotVersion: version, lastSeenAt: new Date() },
      });
      request.log.info({ dataPlane: plane.name, version }, 'data plane applied snapshot');
      return { version };
    },
  );
}
