// The gateway's event bus: graphql-yoga's `createPubSub` (@graphql-yoga/subscription 5, Node 18+)
// over an event target that is the transport. In-process the target is `LocalEventTarget`; with a
// PostgreSQL server it is the LISTEN/NOTIFY target in storage/events, which delivers here and to
// every other process sharing the database. The bus adds only what the pub/sub lacks: a
// subscription filter, a count of open subscriptions (readiness of tests and metrics), and close.
//
// Bounds: a subscriber is a Repeater; one that stops reading collects at most 1024 undelivered
// events, after which the Repeater refuses more and the target drops them for that subscriber
// (reported through `onListenerError`). A subscriber catches up by re-reading its query: events
// are references to rows (types.ts), never the rows themselves.
import { createPubSub, type Repeater } from '@graphql-yoga/subscription';
import { mapEvents } from './map-events.js';
import type { EventBus, GatewayEvent } from './types.js';

/** The one topic: every gateway event; subscribers filter by tenant and type. */
export const GATEWAY_EVENTS_TOPIC = 'gateway';

export interface GatewayEventTarget extends EventTarget {
  /**
   * True when a dispatched event also leaves the process (PostgreSQL): then it is dispatched even
   * with no subscriber here. False in-process, where publishing to nobody costs nothing.
   */
  readonly forwardsRemotely: boolean;
  /** Releases the transport (connections, pending sends); dispatch is a no-op afterwards. */
  close(): Promise<void>;
}

/**
 * An EventTarget whose listeners cannot break a publisher: each listener runs in its own
 * try/catch (Node's EventTarget reports a throwing listener as an uncaught exception), and the
 * failure goes to `onListenerError`.
 */
export class LocalEventTarget extends EventTarget implements GatewayEventTarget {
  readonly #onListenerError: (error: unknown) => void;
  #closed = false;

  get forwardsRemotely(): boolean {
    return false;
  }

  constructor(options: { onListenerError?: (error: unknown) => void } = {}) {
    super();
    this.#onListenerError = options.onListenerError ?? (() => {});
  }

  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ): void {
    if (listener === null) return;
    super.addEventListener(type, this.#guard(listener), options);
  }

  override removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: EventListenerOptions | boolean,
  ): void {
    if (listener === null) return;
    super.removeEventListener(type, this.#guarded.get(listener) ?? listener, options);
    this.#guarded.delete(listener);
  }

  /** Delivers to this process's listeners only (subclasses add their transport around it). */
  deliverLocally(event: Event): void {
    if (!this.#closed) super.dispatchEvent(event);
  }

  override dispatchEvent(event: Event): boolean {
    this.deliverLocally(event);
    return true;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  readonly #guarded = new Map<EventListenerOrEventListenerObject, EventListener>();

  #guard(listener: EventListenerOrEventListenerObject): EventListener {
    const existing = this.#guarded.get(listener);
    if (existing) return existing;
    const onError = this.#onListenerError;
    const guarded: EventListener = (event) => {
      try {
        if (typeof listener === 'function') listener(event);
        else listener.handleEvent(event);
      } catch (error) {
        onError(error);
      }
    };
    this.#guarded.set(listener, guarded);
    return guarded;
  }
}

/** The bus over `target` (default: in-process). The bus owns the target: `close()` closes it. */
export function createEventBus(target: GatewayEventTarget = new LocalEventTarget()): EventBus {
  const pubsub = createPubSub<{ [GATEWAY_EVENTS_TOPIC]: [GatewayEvent] }>({ eventTarget: target });
  const open = new Set<Repeater<GatewayEvent>>();
  return {
    publish(event) {
      if (open.size > 0 || target.forwardsRemotely) pubsub.publish(GATEWAY_EVENTS_TOPIC, event);
    },
    publishMany(events) {
      if (open.size === 0 && !target.forwardsRemotely) return;
      for (const event of events) pubsub.publish(GATEWAY_EVENTS_TOPIC, event);
    },
    subscribe(filter) {
      const source = pubsub.subscribe(GATEWAY_EVENTS_TOPIC);
      open.add(source);
      // A Repeater attaches its listener on the first next(): ask now, so that an event published
      // right after subscribe() returns is not missed (the long-poll subscribes, then reads).
      const first = source.next();
      const end = () => open.delete(source);
      return mapEvents(trackSubscription(source, first, end), (event) =>
        filter(event) ? event : undefined,
      );
    },
    get subscriberCount() {
      return open.size;
    },
    async close() {
      await Promise.all([...open].map((source) => source.return()));
      open.clear();
      await target.close();
    },
  };
}

/**
 * `source` with its first result already asked for, telling `onEnd` once it ends (returned or
 * drained), so the bus counts open subscriptions exactly.
 */
function trackSubscription(
  source: Repeater<GatewayEvent>,
  first: Promise<IteratorResult<GatewayEvent>>,
  onEnd: () => void,
): AsyncIterableIterator<GatewayEvent> {
  let pending: Promise<IteratorResult<GatewayEvent>> | null = first;
  const iterator: AsyncIterableIterator<GatewayEvent> = {
    async next() {
      const result = await (pending ?? source.next());
      pending = null;
      if (result.done) onEnd();
      return result;
    },
    async return() {
      onEnd();
      await source.return();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
