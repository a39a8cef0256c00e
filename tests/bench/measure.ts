// Time per call of a synchronous function, for micro-benchmarks: calibrates a batch size to about
// 20 ms, then takes the median of ROUNDS batches of about ROUND_MS each. The results of the calls
// are summed into a sink that `keepAlive` reads, so the JIT cannot drop the calls as dead code.
const ROUNDS = 7;
const ROUND_MS = 150;
let sink = 0;

/** Median nanoseconds per call of `run`. */
export function measureNsPerCall(run: (i: number) => number): number {
  const batch = (n: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += run(i);
    return Number(process.hrtime.bigint() - t0);
  };
  let n = 1000;
  while (batch(n) < 20e6 && n < 1e9) n *= 2;
  const perBatch = Math.max(1, Math.round((n * ROUND_MS * 1e6) / Math.max(1, batch(n))));
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) samples.push(batch(perBatch) / perBatch);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/** Reads the sink once, after all measurements. */
export function keepAlive(): void {
  if (sink === Number.MIN_SAFE_INTEGER) console.log(sink);
}

/** Nearest-rank percentile of `values` (unsorted), `p` in 0-100. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A report row of latencies in milliseconds: p50, p99 and max, one decimal. */
export function latencyRow(
  measure: string,
  values: readonly number[],
): { measure: string; 'p50 ms': string; 'p99 ms': string; 'max ms': string } {
  const ms = (value: number) => value.toFixed(1);
  return {
    measure,
    'p50 ms': ms(percentile(values, 50)),
    'p99 ms': ms(percentile(values, 99)),
    'max ms': ms(Math.max(...values)),
  };
}
