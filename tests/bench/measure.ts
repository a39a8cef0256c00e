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
