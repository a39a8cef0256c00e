// Decision reports are written once (docs/config-push.md, "Decision counts"), on both databases:
// the real data-plane client reports its real tally through a loopback proxy to the real ack
// endpoint. The proxy lets the control plane write the first report and then cuts the connection
// before its answer arrives, as a timeout or a reset would: the client sends the same report again
// under its id, the control plane says it was written already, and the counts are the tally's,
// not twice them. A malformed report id is refused (400 REQUEST_INVALID) and writes nothing.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerDataPlane } from '../../control-plane/stream/credentials.js';
import { ConfigStreamHub } from '../../control-plane/stream/hub.js';
import { configStreamPlugin } from '../../control-plane/stream/plugin.js';
import { DecisionTally } from '../../data-plane/metrics/decision-tally.js';
import { ConfigStreamClient } from '../../data-plane/remote/client.js';
import { SnapshotStore } from '../../data-plane/store/snapshot-store.js';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';
import { PublicUrl } from '../../shared/public-url.js';
import { postAck } from '../support/config-stream.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.js';

/** A decision report as it went through the proxy, with the control plane's answer. */
interface Delivery {
  readonly reportId: string | undefined;
  readonly rows: number;
  readonly status: number;
  readonly answer: { decisions?: number; replayed?: boolean };
  /** The proxy cut the connection instead of handing the answer on. */
  readonly lost: boolean;
}

/**
 * A loopback proxy to `target`: streams pass through; a POST carrying `decisions` is forwarded,
 * its answer read whole, and then, while `loseAnswers` is above 0, the client's connection is cut
 * instead of answering.
 */
function lossyProxy(target: string) {
  const deliveries: Delivery[] = [];
  const waiting: (() => void)[] = [];
  const state = { loseAnswers: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const report =
        req.method === 'POST'
          ? (JSON.parse(body.toString('utf8')) as { decisions?: unknown[]; report_id?: string })
          : undefined;
      const upstream = httpRequest(
        new URL(req.url ?? '/', target),
        { method: req.method, headers: req.headers },
        (answer) => {
          if (!report?.decisions) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            return;
          }
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(answerChunks);
            const lost = state.loseAnswers > 0;
            if (lost) state.loseAnswers--;
            deliveries.push({
              reportId: report.report_id,
              rows: report.decisions?.length ?? 0,
              status: answer.statusCode ?? 0,
              answer: JSON.parse(text.toString('utf8')),
              lost,
            });
            for (const wake of waiting.splice(0)) wake();
            if (lost) {
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(text);
          });
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  return {
    server,
    state,
    deliveries,
    /** Resolves once `count` reports went through. */
    async delivered(count: number): Promise<Delivery[]> {
      while (deliveries.length < count) {
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      return deliveries.slice(0, count);
    },
  };
}

describeEachDatabase('decision reports over the stream', (kind) => {
  let t: TestDatabase;
  let app: FastifyInstance;
  let proxy: ReturnType<typeof lossyProxy>;
  let controlPlaneUrl: string;
  let proxyUrl: string;
  let tenantId: string;
  let dir: string;

  const counts = async () =>
    (
      await t.db.query<{ outcome: string; toolName: string; count: number }>(
        `select outcome, "toolName", count from decision_counts where "tenantId" = $1
          order by outcome, "toolName"`,
        [tenantId],
      )
    ).map((row) => [row.outcome, row.toolName, row.count]);

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    dir = await mkdtemp(join(tmpdir(), 'agw-decision-reports-'));
    tenantId = (await t.db.prisma.tenant.create({ data: { id: randomUUID(), name: 'counted' } }))
      .id;
    // Heartbeats often: each one sends the next report.
    const hub = new ConfigStreamHub({ heartbeatMs: 50 });
    app = await buildServer({ logger: pino({ level: 'silent' }), readiness: createReadiness() });
    await app.register(configStreamPlugin, {
      db: t.db,
      hub,
      publicUrl: new PublicUrl('http://gateway.test'),
    });
    app.addHook('onClose', async () => hub.close());
    await app.listen({ host: '127.0.0.1', port: 0 });
    controlPlaneUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    proxy = lossyProxy(controlPlaneUrl);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    proxy?.server.closeAllConnections();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await app?.close();
    await t?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('a report whose answer was lost is sent again under its id and counted once', async () => {
    const plane = await registerDataPlane(t.db, `dp-reports-${kind}`);
    const tally = new DecisionTally();
    for (let i = 0; i < 3; i++) tally.count(tenantId, 'deny', 'files', 'echo', 'R1');
    tally.count(tenantId, 'allow', 'files', 'read', null);
    tally.count(tenantId, 'allow', 'files', 'read', null);
    proxy.state.loseAnswers = 1;
    const store = new SnapshotStore();
    const client = new ConfigStreamClient({
      controlPlaneUrl: proxyUrl,
      credential: plane.credential,
      name: plane.name,
      snapshotFile: join(dir, `${kind}.json`),
      logger: pino({ level: 'silent' }),
      heartbeatMs: 50,
      decisions: tally,
      apply: (snapshot) => store.apply(snapshot),
    });
    client.start();
    try {
      const [first, again] = await proxy.delivered(2);
      // The control plane wrote the first delivery; its answer never reached the client.
      expect(first).toMatchObject({ rows: 2, status: 200, lost: true });
      expect(first?.answer).toEqual({ decisions: 2, replayed: false });
      expect(first?.reportId).toMatch(/^[0-9a-f-]{36}$/);
      // The same report again, under the same id: written already, so nothing is added.
      expect(again).toEqual({
        reportId: first?.reportId,
        rows: 2,
        status: 200,
        answer: { decisions: 2, replayed: true },
        lost: false,
      });
      expect(await counts()).toEqual([
        ['allow', '', 2],
        ['deny', 'echo', 3],
      ]);

      // Counts made after it go in a report of their own.
      tally.count(tenantId, 'deny', 'files', 'echo', 'R1');
      const third = (await proxy.delivered(3))[2];
      expect(third).toMatchObject({ rows: 1, status: 200, lost: false });
      expect(third?.reportId).not.toBe(first?.reportId);
      expect(third?.answer).toEqual({ decisions: 1, replayed: false });
      expect(await counts()).toEqual([
        ['allow', '', 2],
        ['deny', 'echo', 4],
      ]);
    } finally {
      await client.stop();
    }
  });

  it('refuses a malformed report id (400 REQUEST_INVALID) and writes nothing', async () => {
    const plane = await registerDataPlane(t.db, `dp-bad-id-${kind}`);
    const row = {
      tenantId,
      minute: Date.now() - (Date.now() % 60_000),
      outcome: 'deny',
      serverId: 'files',
      toolName: 'bad-id',
      reasonCode: 'R1',
      count: 5,
    };
    const id = randomUUID();
    const post = (body: unknown) => postAck(controlPlaneUrl, plane.credential, body);
    for (const body of [
      { decisions: [row], report_id: 'short' },
      { decisions: [row], report_id: 'x'.repeat(65) },
      { decisions: [row], report_id: 'has spaces in it, 1234' },
      { decisions: [row], report_id: id, version: 3 },
      { decisions: [row], report_id: id, kill: 3, aborted: 0 },
      { report_id: id },
    ]) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { reasonCode?: string }).reasonCode).toBe(
        'REQUEST_INVALID',
      );
    }
    expect(await t.db.query(`select 1 from decision_counts where "toolName" = 'bad-id'`)).toEqual(
      [],
    );
    expect(await t.db.query(`select 1 from decision_reports where id = $1`, [id])).toEqual([]);
    // Well formed, it is written once.
    for (const replayed of [false, true]) {
      const response = await post({ decisions: [row], report_id: id });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ decisions: 1, replayed });
    }
    expect(
      await t.db.query(`select count from decision_counts where "toolName" = 'bad-id'`),
    ).toEqual([{ count: 5 }]);
  });
});
