// Follows one event type on the bus for the life of a component: subscribe, hand each event to
// a handler, and stop by ending the subscription and waiting for the loop. Components that react
// to events (revocations, kill announcements, API-key revocations) use this instead of each
// writing the subscribe / for-await / return / await-the-loop steps again.
import type { EventBus, GatewayEvent } from './types.js';

/** An event of one type, narrowed. */
export type GatewayEventOf<T extends GatewayEvent['type']> = Extract<GatewayEvent, { type: T }>;

/**
 * Calls `handle` with every event of `type` until the returned stop is awaited. Subscribed before
 * this returns, so nothing published afterwards is missed. A handler that throws ends nothing:
 * its error goes to `onError`.
 */
export function followEvents<T extends GatewayEvent['type']>(
  bus: Pick<EventBus, 'subscribe'>,
  type: T,
  handle: (event: GatewayEventOf<T>) => void,
  onError: (error: unknown) => void,
): () => Promise<void> {
  const subscription = bus.subscribe((event) => event.type === type);
  const loop = (async () => {
    for await (const event of subscription) {
      if (event.type !== type) continue;
      try {
        handle(event as GatewayEventOf<T>);
      } catch (error) {
        onError(error);
      }
    }
  })().catch(onError);
  return async () => {
    await subscription.return?.();
    await loop;
  };
}
