// The embedded database's thread: opens PGlite (@electric-sql/pglite 0.5.16, PostgreSQL compiled
// to WASM; it runs on Node 20 because it needs nothing but WebAssembly and the file system) and
// serves it over the PostgreSQL wire protocol on a unix socket with
// @electric-sql/pglite-socket 0.2.17 (plain Node `net`, also fine on Node 20).
//
// Why a thread: PGlite executes every query synchronously on the thread that calls it. Run on the
// main thread, each commit stalls every request in flight; here it stalls only this thread, and
// the main thread reaches the database through `pg` like any PostgreSQL server.
//
// The socket server multiplexes its connections onto PGlite's one session: one protocol message
// at a time, and while a connection is inside an extended-protocol batch or a transaction only
// that connection is served (pglite-session-queue.ts replaces the library's queue, which let
// batches interleave). So a transaction must never wait for another connection: it would wait
// for itself.
//
// Protocol with the parent (see embedded-server.ts): `ready` once listening, or `failed` (stage
// `open` when PGlite cannot open the data, `listen` when the socket cannot be created); on
// `close` it stops the server, closes PGlite (writing its data out) and ends; `ping` is answered
// with `pong`, so the parent can tell a live thread from a dead one.
import { access, chmod, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { keepPGliteFilesPrivate } from './pglite-file-modes.js';
import { PGliteSessionQueue } from './pglite-session-queue.js';

export interface PGliteWorkerData {
  readonly role: typeof WORKER_ROLE;
  /** PGlite's data directory (`<dataDir>/pgdata`), or null for an in-memory database. */
  readonly pgdata: string | null;
  /** In memory: a data-directory dump to start from (storage/pglite-template.ts), or null. */
  readonly template: string | null;
  /**
   * On disk: the empty cluster a new `pgdata` starts from instead of initdb (cluster-template.ts),
   * or null to run initdb. Unused once `pgdata` holds a cluster.
   */
  readonly clusterTemplate: string | null;
  /** PGlite's WebAssembly compiled by the parent (embedded-server.ts), or null to compile here. */
  readonly wasmModule: WebAssembly.Module | null;
  readonly socketPath: string;
  readonly maxConnections: number;
}

/** Marks the thread this module must serve in (the module is also imported for `servePGlite`). */
export const WORKER_ROLE = 'agent-gateway-pglite';

export type PGliteWorkerReport =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly stage: 'open' | 'listen'; readonly reason: string }
  | { readonly type: 'pong' }
  | { readonly type: 'closed' };

export type PGliteWorkerCommand = { readonly type: 'close' } | { readonly type: 'ping' };

/** Serves `db` on `socketPath` (a stale socket file there is replaced; the caller holds the lock). */
export async function servePGlite(
  db: PGlite,
  socketPath: string,
  maxConnections: number,
): Promise<PGLiteSocketServer> {
  await unlink(socketPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
  // Connection handlers take the server's queue when they are created, i.e. after start().
  (server as unknown as { queryQueue: PGliteSessionQueue }).queryQueue = new PGliteSessionQueue(db);
  await server.start();
  // Anyone who can connect is the database superuser: only this user may.
  await chmod(socketPath, 0o600);
  return server;
}

async function main(port: NonNullable<typeof parentPort>, data: PGliteWorkerData): Promise<void> {
  const report = (message: PGliteWorkerReport) => port.postMessage(message);
  // Before PGlite touches a file: everything it creates is private (pglite-file-modes.ts).
  keepPGliteFilesPrivate();
  let db: PGlite;
  try {
    db = await openPGlite(data);
    await db.query('select 1');
  } catch (error) {
    report({ type: 'failed', stage: 'open', reason: describeError(error) });
    return;
  }
  let server: PGLiteSocketServer;
  try {
    server = await servePGlite(db, data.socketPath, data.maxConnections);
  } catch (error) {
    await db.close().catch(() => {});
    report({ type: 'failed', stage: 'listen', reason: describeError(error) });
    return;
  }
  port.on('message', (command: PGliteWorkerCommand) => {
    if (command.type === 'ping') {
      report({ type: 'pong' });
      return;
    }
    void (async () => {
      await server.stop();
      await db.close();
      await unlink(data.socketPath).catch(() => {});
      report({ type: 'closed' });
      port.close();
    })();
  });
  report({ type: 'ready' });
}

async function openPGlite(data: PGliteWorkerData): Promise<PGlite> {
  const dump = (path: string) => readFile(path).then((bytes) => new Blob([bytes]));
  const compiled = data.wasmModule === null ? {} : { pgliteWasmModule: data.wasmModule };
  if (data.template !== null) {
    return PGlite.create({ ...compiled, loadDataDir: await dump(data.template) });
  }
  if (data.pgdata === null) return PGlite.create(compiled);
  if (data.clusterTemplate !== null && !(await hasCluster(data.pgdata))) {
    return PGlite.create({
      ...compiled,
      dataDir: data.pgdata,
      loadDataDir: await dump(data.clusterTemplate),
    });
  }
  return PGlite.create({ ...compiled, dataDir: data.pgdata });
}

/** PGlite's own test for an existing cluster (it refuses to load a dump over one). */
function hasCluster(pgdata: string): Promise<boolean> {
  return access(join(pgdata, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describeError(error.errors[0]);
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

const data = workerData as PGliteWorkerData | null;
if (parentPort !== null && data?.role === WORKER_ROLE) await main(parentPort, data);
