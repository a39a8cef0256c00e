// Starts the embedded database as a PostgreSQL server on a unix socket, so the rest of storage
// reaches it with `pg` exactly as it reaches a real server: one code path for both.
//
// Normally PGlite runs in a worker thread (pglite-worker.ts), so its synchronous query execution
// never blocks the event loop. A PGlite instance handed in by the caller (schema tooling that also
// diffs it) is served on the calling thread instead: same socket, same client path.
//
// Invariants: the socket is `<dataDir>/.s.PGSQL.5432` (a private temp directory for an in-memory
// database, or when that path is too long for a socket address), readable by this user only;
// the caller holds the data directory's lock, so a socket file left by a killed process is
// replaced. A worker that stops without being asked to (crash, out of memory) turns into
// `failure`, a STORAGE_EMBEDDED_STOPPED error the database reports instead of a bare socket error.
import { statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import { findClusterTemplate } from './cluster-template.js';
import { BUILT_ENGINE_DIRECTORY, pgliteDistFile } from './pglite-package.js';
import {
  type PGliteWorkerCommand,
  type PGliteWorkerData,
  type PGliteWorkerReport,
  servePGlite,
  WORKER_ROLE,
} from './pglite-worker.js';
import { raiseWasmTieringBudget } from './wasm-tiering.js';

/** The port number only names the socket file (`.s.PGSQL.<port>`), as for PostgreSQL. */
const SOCKET_PORT = 5432;
const SOCKET_FILE = `.s.PGSQL.${SOCKET_PORT}`;
/** sun_path holds 108 bytes on Linux, 104 on macOS, NUL included. */
const MAX_SOCKET_PATH = 100;

export interface EmbeddedServerOptions {
  /** The gateway data directory (PGlite's files are in `<dataDir>/pgdata`); none: in memory. */
  readonly dataDir?: string | undefined;
  /** Serve this instance on the calling thread instead of opening one in a worker. */
  readonly pglite?: PGlite | undefined;
  /** In memory only: start from this data-directory dump instead of an empty cluster. */
  readonly template?: string | undefined;
  /** Connections the server accepts (the client pool must not open more). */
  readonly maxConnections: number;
}

export interface EmbeddedServer {
  /** For `pg`: `host` is the socket's directory, `port` names the socket file. */
  readonly host: string;
  readonly port: number;
  /** The thread serving the database; null when serving on the calling thread. */
  readonly worker: Worker | null;
  /** Set once the worker stopped without being asked to. */
  readonly failure: GatewayError<'STORAGE_EMBEDDED_STOPPED'> | null;
  /**
   * After a connection-level error: the worker's failure if it is dead, null if it still
   * answers (then the error was something else).
   */
  checkAlive(): Promise<GatewayError<'STORAGE_EMBEDDED_STOPPED'> | null>;
  /** Stops serving and closes PGlite (writing its data out); idempotent. */
  close(): Promise<void>;
}

export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  let privateDir: string | null = null;
  let host: string;
  if (dataDir !== undefined && join(dataDir, SOCKET_FILE).length <= MAX_SOCKET_PATH) {
    host = dataDir;
  } else {
    privateDir = await mkdtemp(join(tmpdir(), 'agw-pglite-'));
    host = privateDir;
  }
  const socketPath = join(host, SOCKET_FILE);
  const removePrivateDir = async () => {
    if (privateDir !== null) await rm(privateDir, { recursive: true, force: true });
  };
  try {
    if (options.pglite !== undefined) {
      return await serveOnThisThread(options.pglite, host, socketPath, options, removePrivateDir);
    }
    return await serveInWorker(dataDir, host, socketPath, options, removePrivateDir);
  } catch (error) {
    await removePrivateDir();
    throw error;
  }
}

async function serveOnThisThread(
  pglite: PGlite,
  host: string,
  socketPath: string,
  options: EmbeddedServerOptions,
  cleanup: () => Promise<void>,
): Promise<EmbeddedServer> {
  let server: PGLiteSocketServer;
  try {
    await pglite.query('select 1');
    server = await servePGlite(pglite, socketPath, options.maxConnections);
  } catch (error) {
    throw gatewayError(
      'STORAGE_DATA_DIR_CORRUPT',
      { dataDir: 'memory', reason: describeError(error) },
      { cause: error },
    );
  }
  let closing: Promise<void> | null = null;
  return {
    host,
    port: SOCKET_PORT,
    worker: null,
    failure: null,
    checkAlive: async () => null,
    close() {
      closing ??= (async () => {
        await server.stop();
        await pglite.close();
        await cleanup();
      })();
      return closing;
    },
  };
}

async function serveInWorker(
  dataDir: string | undefined,
  host: string,
  socketPath: string,
  options: EmbeddedServerOptions,
  cleanup: () => Promise<void>,
): Promise<EmbeddedServer> {
  const where = dataDir ?? 'memory';
  const data: PGliteWorkerData = {
    role: WORKER_ROLE,
    pgdata: dataDir === undefined ? null : join(dataDir, 'pgdata'),
    template: dataDir === undefined ? (options.template ?? null) : null,
    // A new data directory starts from the build's empty cluster instead of running initdb.
    clusterTemplate: dataDir === undefined ? null : await findClusterTemplate(),
    wasmModule: await compiledPGlite(),
    socketPath,
    maxConnections: options.maxConnections,
  };
  const worker = new Worker(WORKER_URL, { workerData: data });

  let closeRequested = false;
  let failure: GatewayError<'STORAGE_EMBEDDED_STOPPED'> | null = null;
  let exited = false;
  const pongs: (() => void)[] = [];
  const exitWaiters: (() => void)[] = [];
  let lastError: unknown = null;
  const exit = new Promise<number>((resolveExit) => worker.once('exit', resolveExit));

  const started = new Promise<void>((resolveStart, rejectStart) => {
    worker.on('message', (report: PGliteWorkerReport) => {
      if (report.type === 'ready') resolveStart();
      else if (report.type === 'failed') {
        const error =
          report.stage === 'open'
            ? gatewayError('STORAGE_DATA_DIR_CORRUPT', { dataDir: where, reason: report.reason })
            : gatewayError('STORAGE_DATA_DIR_UNWRITABLE', {
                what: 'the database socket',
                path: socketPath,
                reason: report.reason,
              });
        rejectStart(error);
      } else if (report.type === 'pong') pongs.shift()?.();
    });
    worker.on('error', (error) => {
      lastError = error;
    });
    void exit.then((code) => {
      exited = true;
      if (!closeRequested) {
        const reason =
          lastError === null ? `its thread ended (exit code ${code})` : describeError(lastError);
        failure = gatewayError(
          'STORAGE_EMBEDDED_STOPPED',
          { dataDir: where, reason },
          lastError === null ? undefined : { cause: lastError },
        );
        rejectStart(
          gatewayError(
            'STORAGE_DATA_DIR_CORRUPT',
            { dataDir: where, reason },
            lastError === null ? undefined : { cause: lastError },
          ),
        );
      }
      for (const waiter of exitWaiters.splice(0)) waiter();
      for (const pong of pongs.splice(0)) pong();
    });
  });
  try {
    await started;
  } catch (error) {
    closeRequested = true;
    await worker.terminate();
    throw error;
  }
  // While serving, the database's connections keep the process alive when in use; the thread
  // alone must not. Starting and closing keep it alive until they are done.
  worker.unref();

  let closing: Promise<void> | null = null;
  return {
    host,
    port: SOCKET_PORT,
    worker,
    get failure() {
      return failure;
    },
    checkAlive() {
      if (exited) return Promise.resolve(failure);
      return new Promise((resolveCheck) => {
        // Either the thread answers (alive) or its exit is seen first (dead).
        pongs.push(() => resolveCheck(failure));
        worker.postMessage({ type: 'ping' } satisfies PGliteWorkerCommand);
      });
    },
    close() {
      closing ??= (async () => {
        if (!exited) {
          closeRequested = true;
          worker.ref();
          const closed = new Promise<void>((resolveClosed) => exitWaiters.push(resolveClosed));
          worker.postMessage({ type: 'close' } satisfies PGliteWorkerCommand);
          await closed;
        }
        await cleanup();
      })();
      return closing;
    },
  };
}

let pgliteModule: Promise<WebAssembly.Module | null> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process and handed to every database thread (a module
 * is shared between threads, not copied): a thread compiling its own spent about 1 s of CPU more
 * per database, and the test suite opens hundreds in a few processes. Null when it cannot be
 * compiled here: the thread then compiles it as before and reports any failure itself.
 */
function compiledPGlite(): Promise<WebAssembly.Module | null> {
  raiseWasmTieringBudget();
  pgliteModule ??= readFile(pgliteDistFile('pglite.wasm'))
    .then((bytes) => WebAssembly.compile(bytes))
    .catch(() => null);
  return pgliteModule;
}

// Built, the worker is the sibling .js file. From the TypeScript sources (tests, `tsx`) it is the
// built one under dist/ when that is at least as new as the worker's sources (the suite's global
// setup rebuilds a stale dist/): a thread without tsx starts ~0.8 s of CPU sooner, and the suite
// opens hundreds of databases. Otherwise the .ts sibling, which a thread can load only once tsx's
// loader is registered in it; Node 20 applies `--import` loaders to a worker only after its entry
// module loaded, so a two-line entry registers tsx (a dev dependency, present wherever the
// sources run) and then imports the worker.
const WORKER_URL = import.meta.url.endsWith('.ts')
  ? (builtWorkerUrl() ?? sourceWorkerUrl(new URL('./pglite-worker.ts', import.meta.url)))
  : new URL('./pglite-worker.js', import.meta.url);

function builtWorkerUrl(): URL | null {
  // The modules the worker thread runs.
  const modules = ['pglite-worker', 'pglite-file-modes', 'pglite-session-queue'];
  const mtime = (url: URL) => {
    try {
      return statSync(url).mtimeMs;
    } catch {
      return null;
    }
  };
  for (const name of modules) {
    const source = mtime(new URL(`./${name}.ts`, import.meta.url));
    const output = mtime(new URL(`${name}.js`, BUILT_ENGINE_DIRECTORY));
    if (source === null || output === null || output < source) return null;
  }
  return new URL('pglite-worker.js', BUILT_ENGINE_DIRECTORY);
}

function sourceWorkerUrl(worker: URL): URL {
  const tsxApi = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const entry =
    `const { register } = await import(${JSON.stringify(pathToFileURL(tsxApi).href)});\n` +
    `register();\nawait import(${JSON.stringify(worker.href)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(entry)}`);
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describeError(error.errors[0]);
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
