// Waits on a subscription for its next event with a deadline, for loops that re-read state after
// each wake-up (the approval long-poll). One `next()` stays outstanding across waits, so an event
// that arrives after a wait timed out is not lost to an abandoned promise: the next wait sees it.
export interface EventWaiter {
  /** Resolves true when an event arrived, false when `timeoutMs` passed or `signal` aborted. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Ends the subscription. */
  close(): Promise<void>;
}

export function createEventWaiter(source: AsyncIterableIterator<unknown>): EventWaiter {
  let pending: Promise<IteratorResult<unknown>> | null = null;
  return {
    async wait(timeoutMs, signal) {
      if (signal?.aborted || timeoutMs <= 0) return false;
      pending ??= source.next();
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const gaveUp = new Promise<false>((resolve) => {
        timer = setTimeout(resolve, timeoutMs, false);
        onAbort = () => resolve(false);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      const arrived = pending.then((result) => {
        pending = null;
        return !result.done;
      });
      try {
        return await Promise.race([arrived, gaveUp]);
      } finally {
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener('abort', onAbort);
      }
    },
    async close() {
      await source.return?.();
    },
  };
}
