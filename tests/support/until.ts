// Polls a probe of other processes' state until a condition holds: for tests across processes,
// where there is no event to wait for (a data plane's answer after a change elsewhere). The
// bound is a deadline for a broken run, not a pace; a probe that throws counts as its error.
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function until<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((error: unknown) => error as T);
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms (${JSON.stringify(value)})`);
    }
    await pause(10);
  }
}
