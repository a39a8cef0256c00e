// Runs the load generator (load.ts) in a child process, so that it does not share the measured
// server's event loop, and returns its one-line JSON result. load.ts runs when it is loaded, so
// the suites import this instead.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LatencySummary, LoadRequest, LoadResult, LoadSpec } from './load.js';
import type { BenchRow } from './run.js';

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`load generator exited with ${code}`);
  return JSON.parse(output.trim().split('\n').at(-1) ?? '') as LoadResult;
}

export type ThroughputResult = Extract<LoadResult, { kind: 'throughput' }>;

/** autocannon with `connections` for a warm-up and a measured period. */
export async function runThroughput(
  spec: Omit<Extract<LoadSpec, { kind: 'throughput' }>, 'kind'>,
): Promise<ThroughputResult> {
  const result = await runLoad({ kind: 'throughput', ...spec });
  if (result.kind !== 'throughput') throw new Error('unexpected load result');
  return result;
}

/** One request at a time, the targets interleaved; one summary per target. */
export async function runSequential(
  targets: readonly LoadRequest[],
  warmup: number,
  count: number,
): Promise<LatencySummary[]> {
  const result = await runLoad({ kind: 'sequential', targets, warmup, count });
  if (result.kind !== 'sequential') throw new Error('unexpected load result');
  return [...result.targets];
}

/** One table row of a sequential summary: calls, mean and percentiles in ms, unexpected answers. */
export function sequentialRow(scenario: string, r: LatencySummary): BenchRow {
  const ms = (value: number) => Number(value.toFixed(3));
  return {
    scenario,
    calls: r.requests,
    'mean ms': ms(r.mean),
    'p50 ms': ms(r.p50),
    'p90 ms': ms(r.p90),
    'p99 ms': ms(r.p99),
    unexpected: r.unexpected,
  };
}
