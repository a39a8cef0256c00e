// The load generator of the inspect bench, run as a child process so that it does not share the
// measured server's event loop (on 2 cores: the server on one, the load on the other):
//
//   node --import tsx tests/bench/load.ts '<LoadSpec as JSON>'
//
// prints one JSON line (LoadResult). `throughput`: autocannon with N connections for a warm-up
// and then a measured period; latencies are autocannon's per-response times (float ms; its own
// histogram keeps whole milliseconds only). `sequential`: one request at a time, targets
// interleaved (A, B, A, B…) so that drift affects them alike; one keep-alive connection each.
// A request with a `headerPool` sends each value of the pool's file once, in order (single-use
// Agent-Proofs made beforehand by the parent): a throughput run whose pool runs out stops there
// and reports the requests/s of the part it measured; a sequential run must be given enough.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Pool } from 'undici';

export interface LoadRequest {
  readonly url: string;
  readonly method: 'POST' | 'GET';
  readonly headers: Readonly<Record<string, string>>;
  /** Absent for a GET. */
  readonly body?: string;
  /** Responses with another status are counted as unexpected. */
  readonly expectStatus: number;
  /** A header whose value changes per request: the lines of `file`, each sent once. */
  readonly headerPool?: { readonly header: string; readonly file: string } | undefined;
}

export type LoadSpec =
  | {
      readonly kind: 'throughput';
      readonly request: LoadRequest;
      readonly connections: number;
      readonly warmupSeconds: number;
      readonly durationSeconds: number;
    }
  | {
      readonly kind: 'sequential';
      readonly targets: readonly LoadRequest[];
      readonly warmup: number;
      readonly count: number;
    };

export interface LatencySummary {
  readonly requests: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly unexpected: number;
  readonly errors: number;
}

export type LoadResult =
  | ({
      readonly kind: 'throughput';
      readonly rps: number;
      /** The header pool ran out: the measured period ended early (rps is over what ran). */
      readonly poolExhausted: boolean;
      /** Header-pool values sent, warm-up included (0 without a pool). */
      readonly poolUsed: number;
    } & LatencySummary)
  | { readonly kind: 'sequential'; readonly targets: readonly LatencySummary[] };

// autocannon ships no type declarations: the part used here.
interface AutocannonInstance {
  on(
    event: 'response',
    listener: (client: unknown, status: number, bytes: number, ms: number) => void,
  ): void;
  then: Promise<{ errors: number; timeouts: number; duration: number }>['then'];
  stop(): void;
}
type Autocannon = (options: Record<string, unknown>) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function summarize(latencies: number[], unexpected: number, errors: number): LatencySummary {
  const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return {
    requests: latencies.length,
    mean,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: latencies.at(-1) ?? NaN,
    unexpected,
    errors,
  };
}

/** The values of a request's header pool, handed out once each. */
class HeaderPool {
  readonly header: string;
  readonly #values: string[];
  #next = 0;

  constructor(pool: NonNullable<LoadRequest['headerPool']>) {
    this.header = pool.header;
    this.#values = readFileSync(pool.file, 'utf8').split('\n').filter(Boolean);
  }

  get used(): number {
    return this.#next;
  }

  take(): string | undefined {
    if (this.#next === this.#values.length) return undefined;
    return this.#values[this.#next++];
  }
}

async function throughput(spec: Extract<LoadSpec, { kind: 'throughput' }>): Promise<LoadResult> {
  const { request } = spec;
  const pool = request.headerPool ? new HeaderPool(request.headerPool) : undefined;
  let exhausted = false;
  const run = async (seconds: number) => {
    const latencies: number[] = [];
    let unexpected = 0;
    const startedAt = performance.now();
    let stoppedAt: number | undefined;
    const options: Record<string, unknown> = {
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      connections: spec.connections,
      duration: seconds,
    };
    if (pool) {
      options.requests = [
        {
          setupRequest(req: { headers: Record<string, string> }) {
            const value = exhausted ? undefined : pool.take();
            if (value === undefined) {
              // Out of values: stop, and record nothing from here (a request without a fresh
              // value is not the request under test).
              if (stoppedAt === undefined) {
                exhausted = true;
                stoppedAt = performance.now();
                setImmediate(() => instance.stop());
              }
              return req;
            }
            req.headers[pool.header] = value;
            return req;
          },
        },
      ];
    }
    const instance = autocannon(options);
    instance.on('response', (_client, status, _bytes, ms) => {
      if (stoppedAt !== undefined) return;
      latencies.push(ms);
      if (status !== request.expectStatus) unexpected++;
    });
    const result = await instance;
    const measuredSeconds =
      stoppedAt === undefined ? seconds : Math.max(1e-3, (stoppedAt - startedAt) / 1000);
    return {
      latencies,
      unexpected,
      errors: result.errors + result.timeouts,
      seconds: measuredSeconds,
    };
  };
  await run(spec.warmupSeconds);
  const measured = await run(spec.durationSeconds);
  return {
    kind: 'throughput',
    rps: measured.latencies.length / measured.seconds,
    poolExhausted: exhausted,
    poolUsed: pool?.used ?? 0,
    ...summarize(measured.latencies, measured.unexpected, measured.errors),
  };
}

async function sequential(spec: Extract<LoadSpec, { kind: 'sequential' }>): Promise<LoadResult> {
  const clients = spec.targets.map((target) => {
    const url = new URL(target.url);
    return {
      target,
      path: `${url.pathname}${url.search}`,
      pool: new Pool(url.origin, { connections: 1 }),
      headerPool: target.headerPool ? new HeaderPool(target.headerPool) : undefined,
    };
  });
  const latencies = clients.map((): number[] => []);
  const unexpected = clients.map(() => 0);
  const once = async (index: number, record: boolean) => {
    const client = clients[index]!;
    let headers = client.target.headers;
    if (client.headerPool) {
      const value = client.headerPool.take();
      if (value === undefined) throw new Error(`the ${client.headerPool.header} pool ran out`);
      headers = { ...headers, [client.headerPool.header]: value };
    }
    const started = performance.now();
    const response = await client.pool.request({
      path: client.path,
      method: client.target.method,
      headers,
      body: client.target.body,
    });
    await response.body.text();
    const elapsed = performance.now() - started;
    if (!record) return;
    latencies[index]!.push(elapsed);
    if (response.statusCode !== client.target.expectStatus) unexpected[index]!++;
  };
  for (let i = 0; i < spec.warmup + spec.count; i++) {
    // Alternate which target goes first, so neither always follows the other.
    for (let j = 0; j < clients.length; j++) {
      await once((i + j) % clients.length, i >= spec.warmup);
    }
  }
  await Promise.all(clients.map((c) => c.pool.close()));
  return {
    kind: 'sequential',
    targets: clients.map((_, i) => summarize(latencies[i]!, unexpected[i]!, 0)),
  };
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const result = spec.kind === 'throughput' ? await throughput(spec) : await sequential(spec);
process.stdout.write(`${JSON.stringify(result)}\n`);
