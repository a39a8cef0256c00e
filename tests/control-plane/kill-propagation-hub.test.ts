// Kill deltas on the configuration stream, without processes: the hub writes a kill to every
// client at once and says to whom; a client connecting with a kill cursor gets the kills it
// missed, then the live ones, then the snapshot, then the heartbeat that marks it caught up; the
// HubKillSink waits for acknowledgements (answering as soon as all are in); the ack endpoint takes
// `{kill, aborted}` strictly; and the real data-plane client, against the real endpoint and
// database, applies the kills it missed before the snapshot and acknowledges each at once.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { buildConfigSnapshot } from '../../control-plane/snapshot/build-snapshot.js';
import { registerDataPlane } from '../../control-plane/stream/credentials.js';
import { ConfigStreamHub } from '../../control-plane/stream/hub.js';
import { HubKillSink } from '../../control-plane/stream/kill-sink.js';
import { configStreamPlugin } from '../../control-plane/stream/plugin.js';
import { ConfigStreamClient } from '../../data-plane/remote/client.js';
import { SnapshotStore } from '../../data-plane/store/snapshot-store.js';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import { PublicUrl } from '../../shared/public-url.js';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import type { Database } from '../../storage/engine/database.js';
import { readKillDeltasAfter } from '../../storage/tables/kill-deltas.js';
import { killDelta, parseSse, postAck, recordingStreamClient } from '../support/config-stream.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.js';

const snapshot = (version: number, killsThrough = 0): ConfigSnapshot => ({
  version,
  builtAt: new Date(0).toISOString(),
  killsThrough,
  tenants: [],
  tokenSigningKeys: [],
});

function deferred<T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('kill deltas in the hub', () => {
  it('writes a kill to every client at once, id kill:<seq>, and names each data plane once', () => {
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    try {
      hub.apply(snapshot(1));
      const a = recordingStreamClient();
      const a2 = recordingStreamClient();
      const b = recordingStreamClient();
      hub.connect(a, 1, hub.epoch, { dataPlane: { id: 'a', name: 'dp-a' } });
      hub.connect(a2, 1, hub.epoch, { dataPlane: { id: 'a', name: 'dp-a' } }); // a reconnect overlap
      hub.connect(b, 0, '', { dataPlane: { id: 'b', name: 'dp-b' } });
      const recipients = hub.sendKill(killDelta(7));
      expect(recipients).toEqual([
        { id: 'a', name: 'dp-a' },
        { id: 'b', name: 'dp-b' },
      ]);
      const [event] = parseSse(a.texts);
      expect(event).toEqual({ event: 'kill', id: 'kill:7', data: JSON.stringify(killDelta(7)) });
      expect(parseSse(b.texts).map((e) => e.event)).toEqual(['snapshot', 'kill']);
    } finally {
      hub.close();
    }
  });

  it('sends a catching-up client its missed kills, then live ones, then the snapshot, then a heartbeat', async () => {
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    try {
      hub.apply(snapshot(3));
      const missed = deferred<readonly AgentKillDelta[]>();
      const c = recordingStreamClient();
      hub.connect(c, 1, hub.epoch, {
        dataPlane: { id: 'c', name: 'dp-c' },
        catchUp: () => missed.promise,
      });
      // While the table is read: counted as a recipient, nothing written yet.
      expect(hub.sendKill(killDelta(5))).toEqual([{ id: 'c', name: 'dp-c' }]);
      hub.sendKill(killDelta(6));
      hub.apply(snapshot(4));
      expect(c.texts).toEqual([]);
      missed.resolve([killDelta(4), killDelta(5)]); // the read already saw 5
      await missed.promise;
      await Promise.resolve();
      const events = parseSse(c.texts);
      expect(events.map((e) => `${e.event}:${e.event === 'snapshot' ? e.id : e.id}`)).toEqual([
        'kill:kill:4',
        'kill:kill:5',
        'kill:kill:6',
        `snapshot:${hub.epoch}:4`,
        `heartbeat:${hub.epoch}:4`,
      ]);
      // Released: the next kill goes straight out.
      hub.sendKill(killDelta(8));
      expect(parseSse(c.texts).at(-1)?.id).toBe('kill:8');
    } finally {
      hub.close();
    }
  });

  it('ends a client whose missed kills cannot be read (it reconnects) and never says it is caught up', async () => {
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    try {
      hub.apply(snapshot(1));
      const missed = deferred<readonly AgentKillDelta[]>();
      const c = recordingStreamClient();
      hub.connect(c, 0, '', { catchUp: () => missed.promise });
      missed.reject(new Error('database away'));
      await missed.promise.catch(() => {});
      await Promise.resolve();
      expect(c.ended).toBe(true);
      expect(c.texts).toEqual([]);
      expect(hub.clients).toBe(0);
    } finally {
      hub.close();
    }
  });
});

describe('HubKillSink', () => {
  it('answers as soon as every recipient acknowledged, with each one’s name and aborted count', async () => {
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    try {
      const sink = new HubKillSink(hub);
      const a = recordingStreamClient();
      const b = recordingStreamClient();
      hub.connect(a, 0, '', { dataPlane: { id: 'a', name: 'dp-a' } });
      hub.connect(b, 0, '', { dataPlane: { id: 'b', name: 'dp-b' } });
      // A wait far beyond the test's timeout: the answer can only come from the acknowledgements.
      const answer = sink.deliver(killDelta(3), 600_000);
      hub.acknowledgeKill('a', 2, 9); // another kill: ignored
      hub.acknowledgeKill('x', 3, 9); // not a recipient: ignored
      hub.acknowledgeKill('b', 3, 1);
      hub.acknowledgeKill('a', 3, 0);
      const result = await answer;
      expect(result.dataPlanes).toBe(2);
      expect(result.confirmations.map(({ name, aborted }) => ({ name, aborted }))).toEqual([
        { name: 'dp-b', aborted: 1 },
        { name: 'dp-a', aborted: 0 },
      ]);
      for (const confirmation of result.confirmations) {
        expect(confirmation.ms).toBeGreaterThanOrEqual(0);
      }
    } finally {
      hub.close();
    }
  });

  it('counts a data plane that does not confirm within the wait, without confirming it', async () => {
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    try {
      const sink = new HubKillSink(hub);
      hub.connect(recordingStreamClient(), 0, '', { dataPlane: { id: 'a', name: 'dp-a' } });
      hub.connect(recordingStreamClient(), 0, '', { dataPlane: { id: 'b', name: 'dp-b' } });
      const answer = sink.deliver(killDelta(4), 30);
      hub.acknowledgeKill('a', 4, 0);
      const result = await answer;
      expect(result.dataPlanes).toBe(2);
      expect(result.confirmations.map((c) => c.name)).toEqual(['dp-a']);
      // Nothing connected: answered at once.
      hub.close();
      expect(await sink.deliver(killDelta(5), 600_000)).toEqual({
        dataPlanes: 0,
        confirmations: [],
      });
    } finally {
      hub.close();
    }
  });
});

describeEachDatabase('kill deltas over the stream', (kind) => {
  let t: TestDatabase;
  let db: Database;
  let app: FastifyInstance;
  let hub: ConfigStreamHub;
  let url: string;
  let tenantId: string;
  let dir: string;

  const insertKill = async (name: string) => {
    const publicKey = `test-key-${randomBytes(12).toString('hex')}`;
    const { id: agentId } = await createAgent(db, {
      tenantId,
      name,
      role: 'agent',
      allowedTools: ['*'],
      publicKey,
    });
    const row = await db.prisma.agentKill.create({
      data: {
        id: randomUUID(),
        tenantId,
        agentId,
        publicKey,
        reason: 'test',
        killedAt: new Date(),
        killedBy: 'api_key:test',
        receivedBy: 'test',
        revokedCredentials: 0,
        revokedDelegations: 0,
        revokedOAuthClients: 0,
        revokedTokens: 0,
        rejectedApprovals: 0,
      },
    });
    return { agentId, seq: Number(row.seq) };
  };

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    db = t.db;
    dir = await mkdtemp(join(tmpdir(), 'agw-kill-stream-'));
    const [tenant] = await db.query<{ id: string }>(`select id from tenants limit 1`);
    tenantId =
      tenant?.id ??
      (await db.prisma.tenant.create({ data: { id: randomUUID(), name: 'default' } })).id;
    hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    app = await buildServer({ logger: pino({ level: 'silent' }), readiness: createReadiness() });
    await app.register(configStreamPlugin, {
      db,
      hub,
      publicUrl: new PublicUrl('http://gateway.test'),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await t?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads kills after a cursor in seq order, with the tenant’s status lists once', async () => {
    const first = await insertKill('first');
    const second = await insertKill('second');
    const deltas = await readKillDeltasAfter(db, first.seq - 1);
    expect(deltas.map((d) => [d.seq, d.agentId])).toEqual([
      [first.seq, first.agentId],
      [second.seq, second.agentId],
    ]);
    expect(await readKillDeltasAfter(db, second.seq)).toEqual([]);
  });

  it('refuses malformed acknowledgements (400 REQUEST_INVALID) and writes nothing', async () => {
    const plane = await registerDataPlane(db, `dp-ack-${kind}`);
    const acks: unknown[] = [];
    const stop = hub.onKillAcknowledged((...args) => acks.push(args));
    try {
      const post = (body: unknown) => postAck(url, plane.credential, body);
      for (const body of [
        { kill: 3 },
        { aborted: 0 },
        { version: 2, kill: 3, aborted: 0 },
        { kill: 3, aborted: 0, extra: true },
        { version: 2, extra: true },
        { kill: 0, aborted: 0 },
        { kill: 3, aborted: -1 },
        {},
      ]) {
        const response = await post(body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(((await response.json()) as { reasonCode: string }).reasonCode).toBe(
          'REQUEST_INVALID',
        );
      }
      expect(acks).toEqual([]);
      const row = await db.prisma.dataPlane.findUniqueOrThrow({ where: { id: plane.id } });
      expect(row.appliedSnapshotVersion).toBeNull();
      expect(row.lastSeenAt).toBeNull();

      const ok = await post({ kill: 3, aborted: 2 });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ kill: 3 });
      expect(acks).toEqual([[plane.id, 3, 2]]);
      // The snapshot acknowledgement is unchanged.
      const version = await post({ version: 2 });
      expect(await version.json()).toEqual({ version: 2 });
    } finally {
      stop();
    }
  });

  it('a reconnecting data plane applies the kills it missed before the snapshot, and acknowledges them', async () => {
    const plane = await registerDataPlane(db, `dp-catch-up-${kind}`);
    const before = await insertKill('before-snapshot');
    hub.apply(await buildConfigSnapshot(db, 1));
    expect(hub.killsThrough).toBe(before.seq);
    const missed = [await insertKill('missed-1'), await insertKill('missed-2')];

    const order: string[] = [];
    const store = new SnapshotStore();
    const acked = new Map<number, () => void>();
    const stop = hub.onKillAcknowledged((id, seq) => {
      if (id === plane.id) acked.get(seq)?.();
    });
    const ackOf = (seq: number) =>
      new Promise<void>((resolve) => {
        acked.set(seq, resolve);
      });
    const acks = missed.map((kill) => ackOf(kill.seq));
    const stream = new ConfigStreamClient({
      controlPlaneUrl: url,
      credential: plane.credential,
      name: plane.name,
      snapshotFile: join(dir, `${kind}.json`),
      logger: pino({ level: 'silent' }),
      heartbeatMs: 60_000,
      apply: (s) => {
        order.push(`snapshot ${s.version}`);
        return store.apply(s);
      },
      applyKill: (d) => {
        order.push(`kill ${d.seq}`);
        return { applied: true, aborted: 1 };
      },
    });
    // A data plane holding snapshot 1 with a cursor at its killsThrough: the two missed kills
    // come first. (A fresh one would start from the hub's snapshot too, since it gets it next.)
    const caughtUp = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (stream.freshness === 'live') {
          clearInterval(poll);
          resolve();
        }
      }, 2);
    });
    expect(stream.freshness).toBe('uncertain');
    stream.start();
    try {
      await caughtUp;
      await Promise.all(acks);
      expect(order).toEqual([`kill ${missed[0]?.seq}`, `kill ${missed[1]?.seq}`, 'snapshot 1']);
      expect(stream.killCursor).toBe(missed[1]?.seq);
      // A live kill after the catch-up arrives on the open stream and is acknowledged.
      const live = await insertKill('live');
      const liveAck = ackOf(live.seq);
      const [liveDelta] = await readKillDeltasAfter(db, live.seq - 1);
      expect(hub.sendKill(liveDelta as AgentKillDelta)).toContainEqual({
        id: plane.id,
        name: plane.name,
      });
      await liveAck;
      expect(order.at(-1)).toBe(`kill ${live.seq}`);
      expect(stream.killCursor).toBe(live.seq);
    } finally {
      stop();
      await stream.stop();
    }
  });
});
