// Durable audit appends through the group-committing writer: appends/s and per-append latency
// (from the call to the resolution after commit) with 1, 8 and 64 closed-loop writers (each
// awaits its append, then appends again), on PGlite in memory, PGlite in a data directory and,
// when DATABASE_URL is set, PostgreSQL (in a schema of its own, dropped afterwards). One tenant:
// every append goes to the same chain, the worst case for the chain head lock.
//
// Second table: what the database does to this thread's event loop. 16 closed-loop writers run
// for a while and `monitorEventLoopDelay` (1 ms resolution) records how late its timer fires:
// PGlite served on this thread (how the embedded database ran before it moved to a worker) and
// PGlite in its worker thread, in memory and in a data directory.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { migrateDatabase } from '../../storage/engine/migrations.js';
import { createAuditWriter } from '../../storage/tables/audit-writer.js';
import type { BenchContext, BenchRow } from './run.js';

const DURATION_MS = 3000;
const WARMUP_APPENDS = 300;
const CONCURRENCY = [1, 8, 64] as const;
const LAG_WRITERS = 16;

interface Storage {
  readonly name: string;
  open(): Promise<{ db: Database; dispose(): Promise<void> }>;
}

const storages: Storage[] = [
  {
    name: 'PGlite (memory)',
    async open() {
      const db = await openDatabase({});
      return { db, dispose: () => db.close() };
    },
  },
  {
    name: 'PGlite (data dir)',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'agw-audit-bench-'));
      const db = await openDatabase({ dataDir: dir });
      return {
        db,
        async dispose() {
          await db.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
if (process.env.DATABASE_URL) {
  storages.push({
    name: 'PostgreSQL',
    async open() {
      const schema = `bench_${randomBytes(4).toString('hex')}`;
      const db = await openDatabase({ url: process.env.DATABASE_URL, schema, maxConnections: 4 });
      return {
        db,
        async dispose() {
          await db.exec(`drop schema "${schema}" cascade`);
          await db.close();
        },
      };
    },
  });
}

export default async function auditBench(ctx: BenchContext): Promise<void> {
  const rows: BenchRow[] = [];
  for (const storage of storages) {
    ctx.progress(`${storage.name}: opening`);
    const { db, dispose } = await storage.open();
    try {
      await migrateDatabase(db);
      for (const writers of CONCURRENCY) {
        ctx.progress(`${storage.name}: ${writers} writer(s) for ${DURATION_MS} ms`);
        rows.push({ storage: storage.name, writers, ...(await measure(db, writers)) });
      }
    } finally {
      await dispose();
    }
  }
  if (!process.env.DATABASE_URL) ctx.progress('DATABASE_URL is not set: PostgreSQL skipped');
  ctx.report('Audit appends (group commit, one tenant, closed loop)', rows);

  const lagRows: BenchRow[] = [];
  const lagStorages: Storage[] = [
    {
      name: 'PGlite on this thread (memory)',
      async open() {
        const db = await openDatabase({ pglite: await PGlite.create() });
        return { db, dispose: () => db.close() };
      },
    },
    ...storages.filter((storage) => storage.name.startsWith('PGlite')),
  ];
  for (const storage of lagStorages) {
    ctx.progress(`${storage.name}: event-loop delay under ${LAG_WRITERS} writers`);
    const { db, dispose } = await storage.open();
    try {
      await migrateDatabase(db);
      const histogram = monitorEventLoopDelay({ resolution: 1 });
      const row = await measure(db, LAG_WRITERS, () => histogram.enable());
      histogram.disable();
      lagRows.push({
        storage: storage.name.replace('PGlite (', 'PGlite worker ('),
        writers: LAG_WRITERS,
        'appends/s': row['appends/s']!,
        'loop delay p99 ms': (histogram.percentile(99) / 1e6).toFixed(1),
        'loop delay max ms': (histogram.max / 1e6).toFixed(1),
        'append p99 ms': row['p99 ms']!,
      });
    } finally {
      await dispose();
    }
  }
  ctx.report(`Event-loop delay of this thread, ${LAG_WRITERS} concurrent writers`, lagRows);
}

async function measure(db: Database, writers: number, onStart?: () => void): Promise<BenchRow> {
  const tenantId = randomUUID();
  await db.query(`insert into tenants (id, name, "updatedAt") values ($1, $2, now())`, [
    tenantId,
    `bench-${tenantId.slice(0, 8)}`,
  ]);
  let flushes = 0;
  let flushedEntries = 0;
  const writer = createAuditWriter(db, {
    onFlush(info) {
      flushes++;
      flushedEntries += info.entries;
    },
  });
  const input = (n: number) => ({
    tenantId,
    action: 'gateway.deny',
    resourceType: 'tool_call',
    resourceId: `call-${n}`,
    metadata: { tool: 'fs.delete', actorType: 'agent', reasonCode: 'MCP_METHOD_BLOCKED', n },
  });
  for (let i = 0; i < WARMUP_APPENDS; i += writers) {
    await Promise.all(Array.from({ length: writers }, (_, w) => writer.append(input(i + w))));
  }
  flushes = 0;
  flushedEntries = 0;
  const latencies: number[] = [];
  onStart?.();
  const started = performance.now();
  const deadline = started + DURATION_MS;
  let n = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await writer.append(input(n++));
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - started;
  await writer.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    'appends/s': Math.round((latencies.length / elapsed) * 1000),
    'p50 ms': at(0.5).toFixed(2),
    'p99 ms': at(0.99).toFixed(2),
    'entries/commit': (flushedEntries / Math.max(1, flushes)).toFixed(1),
    appends: latencies.length,
  };
}
