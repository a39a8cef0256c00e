// A split deployment for the fail-closed walk (fail-closed-walk.test.ts) and the kill bench: one `agent-gateway control-plane`
// and N `agent-gateway data-plane` processes (the real CLI), sharing one PostgreSQL schema, each
// data plane reaching the control plane through a TCP proxy the test controls (cut: connections
// closed and refused; freeze: connections kept but silent) and, with `databaseProxy`, reaching
// PostgreSQL through another (the usage-limits fleet test cuts one data plane's database). Also
// an MCP SDK upstream whose `block` tool answers only when its caller goes away, and reports that
// it saw the connection close.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { registerDataPlane } from '../../control-plane/stream/credentials.js';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { type CliProcess, runCli } from '../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../support/databases.js';
import { SPLIT_PUBLIC_URL } from '../support/public-url.js';

/** A promise with its resolver, keyed by name, created by whichever side asks first. */
class Signals {
  readonly #entries = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  #entry(key: string) {
    let entry = this.#entries.get(key);
    if (!entry) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      entry = { promise, resolve };
      this.#entries.set(key, entry);
    }
    return entry;
  }
  fire(key: string): void {
    this.#entry(key).resolve();
  }
  wait(key: string): Promise<void> {
    return this.#entry(key).promise;
  }
}

export interface BlockingUpstream {
  readonly url: string;
  /** Resolves once the `block` call with this id reached the tool. */
  started(id: string): Promise<void>;
  /** Resolves once the HTTP connection of that call closed before an answer was written. */
  closed(id: string): Promise<void>;
  close(): Promise<void>;
}

/** A stateless JSON-answering MCP server; `block({id})` waits until its caller disconnects. */
export async function startBlockingUpstream(): Promise<BlockingUpstream> {
  const started = new Signals();
  const closed = new Signals();
  const build = () => {
    const server = new McpServer({ name: 'blocking-upstream', version: '1.0.0' });
    server.registerTool(
      'block',
      { description: 'Answers when its caller goes away.', inputSchema: { id: z.string() } },
      async ({ id }) => {
        started.fire(id);
        await closed.wait(id);
        return { content: [{ type: 'text', text: 'released' }] };
      },
    );
    server.registerTool('echo', { description: 'Answers at once.' }, async () => ({
      content: [{ type: 'text', text: 'echo' }],
    }));
    return server;
  };
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const params = (body as { params?: { name?: string; arguments?: { id?: unknown } } })?.params;
      if (params?.name === 'block' && typeof params.arguments?.id === 'string') {
        const id = params.arguments.id;
        res.on('close', () => {
          if (!res.writableFinished) closed.fire(id);
        });
      }
      const server = build();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    started: (id) => started.wait(id),
    closed: (id) => closed.wait(id),
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

export interface TcpProxy {
  readonly url: string;
  /** Closes every connection and refuses new ones until `restore`. */
  cut(): void;
  /** Keeps connections open but forwards nothing either way (a silent partition). */
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<TcpProxy> {
  let mode: 'open' | 'cut' | 'frozen' = 'open';
  const pairs = new Set<[Socket, Socket]>();
  const server = createTcpServer((downstream) => {
    if (mode === 'cut') {
      downstream.destroy();
      return;
    }
    const upstream = tcpConnect(targetPort, targetHost);
    const pair: [Socket, Socket] = [downstream, upstream];
    pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (mode === 'open') to.write(chunk);
      });
    forward(downstream, upstream);
    forward(upstream, downstream);
    const end = () => {
      pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const cut = () => {
    mode = 'cut';
    for (const [a, b] of [...pairs]) {
      a.destroy();
      b.destroy();
    }
  };
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    freeze() {
      mode = 'frozen';
    },
    restore() {
      mode = 'open';
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface DataPlaneProcess {
  readonly name: string;
  readonly dir: string;
  readonly credentialFile: string;
  readonly proxy: TcpProxy;
  /** Between this data plane and PostgreSQL (`databaseProxy` deployments only). */
  readonly databaseProxy: TcpProxy | undefined;
  cli: CliProcess;
  url: string;
}

export interface SplitDeployment {
  readonly schema: string;
  readonly db: Database;
  readonly adminKey: string;
  readonly tenantId: string;
  readonly controlPlane: { cli: CliProcess; url: string };
  readonly dataPlanes: DataPlaneProcess[];
  /**
   * (Re)starts a data plane (after `stopDataPlane`), with `env` added, and resolves once it is
   * ready (`until: 'listening'`: once it listens, ready or not).
   */
  startDataPlane(
    plane: DataPlaneProcess,
    options?: { env?: NodeJS.ProcessEnv; until?: 'ready' | 'listening' },
  ): Promise<void>;
  stopDataPlane(plane: DataPlaneProcess): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the control plane, registers `count` data planes (dp-1 …) and starts them, each behind
 * its own proxy (unless `direct`). `env` is added to every process (e.g. the test heartbeat).
 */
export async function startSplitDeployment(options: {
  count: number;
  env?: NodeJS.ProcessEnv;
  /** Data planes connect to the control plane directly, not through their proxy (benches). */
  direct?: boolean;
  /** Each data plane reaches PostgreSQL through a TCP proxy of its own, to cut its database. */
  databaseProxy?: boolean;
}): Promise<SplitDeployment> {
  if (!postgresUrl) throw new Error('DATABASE_URL is not set');
  const schema = uniqueSchemaName();
  const root = await mkdtemp(join(tmpdir(), 'agw-kill-'));
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: postgresUrl,
    AGENT_GATEWAY_DB_SCHEMA: schema,
    AGENT_GATEWAY_PORT: '0',
    AGENT_GATEWAY_LOG_LEVEL: 'info',
    AGENT_GATEWAY_PUBLIC_URL: SPLIT_PUBLIC_URL,
    ...options.env,
  };
  const cpDir = join(root, 'cp');
  const cpCli = runCli(['control-plane'], { ...env, AGENT_GATEWAY_DATA_DIR: cpDir });
  const cpReady = await cpCli.waitForLog('ready', 90_000);
  const controlPlane = { cli: cpCli, url: cpReady.url as string };
  const adminKey = (await readFile(join(cpDir, 'admin-api-key'), 'utf8')).trim();
  const db = await openDatabase({ url: postgresUrl, schema });
  const [tenant] = await db.query<{ id: string }>(`select id from tenants where name = 'default'`);
  const cpPort = Number(new URL(controlPlane.url).port);
  const dataPlanes: DataPlaneProcess[] = [];
  for (let i = 1; i <= options.count; i++) {
    const name = `dp-${i}`;
    const dir = join(root, name);
    const credentialFile = join(root, `${name}.credential`);
    const { credential } = await registerDataPlane(db, name);
    await writeFile(credentialFile, `${credential}\n`, { mode: 0o600 });
    const proxy = await startTcpProxy(cpPort);
    const databaseProxy = options.databaseProxy ? await startDatabaseProxy() : undefined;
    dataPlanes.push({
      name,
      dir,
      credentialFile,
      proxy,
      databaseProxy,
      cli: undefined as never,
      url: '',
    });
  }
  const startDataPlane = async (
    plane: DataPlaneProcess,
    start: { env?: NodeJS.ProcessEnv; until?: 'ready' | 'listening' } = {},
  ) => {
    plane.cli = runCli(
      [
        'data-plane',
        '--control-plane',
        options.direct ? controlPlane.url : plane.proxy.url,
        '--credential-file',
        plane.credentialFile,
        '--name',
        plane.name,
      ],
      {
        ...env,
        ...(plane.databaseProxy ? { DATABASE_URL: plane.databaseProxy.url } : {}),
        ...start.env,
        AGENT_GATEWAY_DATA_DIR: plane.dir,
      },
    );
    const line = await plane.cli.waitForLog(start.until ?? 'ready', 90_000);
    plane.url = line.url as string;
  };
  const stopDataPlane = async (plane: DataPlaneProcess) => {
    plane.cli.child.kill('SIGTERM');
    await plane.cli.exited;
  };
  await Promise.all(dataPlanes.map((plane) => startDataPlane(plane)));
  return {
    schema,
    db,
    adminKey,
    tenantId: tenant?.id as string,
    controlPlane,
    dataPlanes,
    startDataPlane,
    stopDataPlane,
    async close() {
      // KILL_TEST_LOG_DIR=<dir>: keep every process's output for a post-mortem.
      const logDir = process.env.KILL_TEST_LOG_DIR;
      if (logDir) {
        await writeFile(join(logDir, 'control-plane.log'), cpCli.stdout.join('\n'));
        for (const plane of dataPlanes) {
          await writeFile(join(logDir, `${plane.name}.log`), plane.cli?.stdout.join('\n') ?? '');
        }
      }
      for (const plane of dataPlanes) {
        plane.cli?.child.kill('SIGTERM');
        await plane.cli?.exited;
        await plane.proxy.close();
        await plane.databaseProxy?.close();
      }
      cpCli.child.kill('SIGTERM');
      await cpCli.exited;
      await db.close();
      await dropSchema(schema);
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy to the PostgreSQL server of DATABASE_URL; its `url` is that URL through it. */
async function startDatabaseProxy(): Promise<TcpProxy> {
  const target = new URL(postgresUrl as string);
  const proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
  const through = new URL(target);
  through.hostname = '127.0.0.1';
  through.port = new URL(proxy.url).port;
  return { ...proxy, url: through.toString() };
}

/** A unique id for a blocking call. */
export const callId = () => randomUUID();
