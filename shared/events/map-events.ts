// Maps and filters an event subscription for a subscriber (a GraphQL subscription, the approval
// long-poll) without buffering of its own: backpressure stays with the source.
import type { GatewayEvent } from './types.js';

/** Maps and filters a subscription; `return()` ends the source at once, even mid-`next()`. */
export function mapEvents<T, S = GatewayEvent>(
  source: AsyncIterableIterator<S>,
  map: (event: S) => Promise<T | undefined> | T | undefined,
): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      for (;;) {
        const result = await source.next();
        if (result.done) return { value: undefined, done: true };
        const value = await map(result.value);
        if (value !== undefined) return { value, done: false };
      }
    },
    async return() {
      await source.return?.();
      return { value: undefined, done: true };
    },
    async throw(error: unknown) {
      await source.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
