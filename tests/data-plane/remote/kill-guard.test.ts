// The kill guard of a remote data plane: with a live stream it reads nothing; otherwise a request
// waits for a read of the kill table that started after it arrived (a read already in flight does
// not count), concurrent requests share reads, what a read finds is applied first; and a failed
// read fails closed only once the stream is stale (three heartbeats), not while it reconnects.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamFreshness } from '../../../data-plane/remote/client.js';
import { KillGuard } from '../../../data-plane/remote/kill-guard.js';
import { createReadiness } from '../../../http-edge/health.js';
import { buildServer } from '../../../http-edge/server.js';
import type { AgentKillDelta } from '../../../shared/config-stream/protocol.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { killDelta } from '../../support/config-stream.js';

/** A kill table whose reads (each seeing the rows as of its start) the test releases one by one. */
function gatedTable() {
  const rows: AgentKillDelta[] = [];
  const pending: { after: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  const started: number[] = [];
  return {
    rows,
    pending,
    started,
    read(after: number): Promise<readonly AgentKillDelta[]> {
      started.push(after);
      const seen = rows.filter((row) => row.seq > after);
      return new Promise((resolve, reject) => {
        pending.push({
          after,
          resolve: () => resolve(seen),
          reject,
        });
      });
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('kill guard', () => {
  let freshness: StreamFreshness;
  let cursor: number;
  let applied: number[];
  const table = gatedTable();
  const guard = new KillGuard({
    freshness: () => freshness,
    cursor: () => cursor,
    readKills: (after) => table.read(after),
    applyKills: (deltas) => {
      for (const d of deltas) {
        applied.push(d.seq);
        cursor = Math.max(cursor, d.seq);
      }
    },
    logger: pino({ level: 'silent' }),
  });

  it('reads nothing while the stream is live', async () => {
    freshness = 'live';
    cursor = 0;
    applied = [];
    await guard.check();
    expect(table.started).toEqual([]);
  });

  it('makes a request wait for a read started after it arrived, shared by concurrent requests', async () => {
    freshness = 'uncertain';
    cursor = 4;
    applied = [];
    let firstDone = false;
    const first = guard.check().then(() => {
      firstDone = true;
    });
    await flush();
    expect(table.started).toEqual([4]);
    // Kill 5 commits after the first read started: the next requests must not be served from it.
    table.rows.push(killDelta(5));
    const later: Promise<void>[] = [];
    let laterDone = 0;
    for (let i = 0; i < 20; i++) {
      later.push(
        guard.check().then(() => {
          laterDone++;
        }),
      );
    }
    await flush();
    expect(table.started).toEqual([4]); // one queued read for all twenty, not started yet
    table.pending.shift()?.resolve(); // the first read: it started before kill 5
    await first;
    expect(firstDone).toBe(true);
    await flush();
    expect(laterDone).toBe(0);
    expect(table.started).toEqual([4, 4]);
    expect(applied).toEqual([]);
    table.pending.shift()?.resolve();
    await Promise.all(later);
    expect(laterDone).toBe(20);
    expect(applied).toEqual([5]);
    expect(guard.reads).toBe(2);
  });

  it('fails closed when the stream is stale and the table cannot be read', async () => {
    freshness = 'stale';
    const refused = guard.check();
    await flush();
    table.pending.shift()?.reject(new Error('connection refused'));
    const error = await refused.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(503);
    expect((error as GatewayError).code).toBe('KILL_STATE_UNCONFIRMED');
  });

  it('serves from the last state when the table cannot be read while the stream only reconnects', async () => {
    freshness = 'uncertain';
    const served = guard.check();
    await flush();
    table.pending.shift()?.reject(new Error('connection refused'));
    await expect(served).resolves.toBeUndefined();
  });
});

describe('kill guard as a hook', () => {
  let freshness: StreamFreshness = 'stale';
  const reads: number[] = [];
  const app = buildServer({ logger: pino({ level: 'silent' }), readiness: createReadiness() });

  beforeAll(async () => {
    const server = await app;
    const guard = new KillGuard({
      freshness: () => freshness,
      cursor: () => 0,
      readKills: async (after) => {
        reads.push(after);
        throw new Error('database away');
      },
      applyKills: () => {},
      logger: pino({ level: 'silent' }),
    });
    server.get('/work', async () => ({ ok: true }));
    guard.install(server);
    await server.ready();
  });
  afterAll(async () => (await app).close());

  it('guards routes registered before it, not health probes', async () => {
    const server = await app;
    const refused = await server.inject({ method: 'GET', url: '/work' });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().reasonCode).toBe('KILL_STATE_UNCONFIRMED');
    expect(reads).toEqual([0]);
    const health = await server.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(reads).toEqual([0]);
    freshness = 'live';
    expect((await server.inject({ method: 'GET', url: '/work' })).statusCode).toBe(200);
    expect(reads).toEqual([0]);
  });
});
