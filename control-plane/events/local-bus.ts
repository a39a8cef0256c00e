// The in-process transport: publish hands each event to every matching subscriber's bounded
// queue, synchronously, in publication order. The PostgreSQL transport delivers through one of
// these too, so local delivery has one implementation.
import {
  DEFAULT_MAX_BUFFERED,
  type EventBus,
  EventOverflowError,
  type GatewayEvent,
  type SubscribeOptions,
} from './types.js';

export class LocalEventBus implements EventBus {
  readonly #subscribers = new Set<EventQueue>();

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  publish(event: GatewayEvent): void {
    for (const queue of this.#subscribers) queue.offer(event);
  }

  publishMany(events: readonly GatewayEvent[]): void {
    if (this.#subscribers.size === 0) return;
    for (const event of events) this.publish(event);
  }

  subscribe(
    filter: (event: GatewayEvent) => boolean,
    options: SubscribeOptions = {},
  ): AsyncIterableIterator<GatewayEvent> {
    const queue = new EventQueue(filter, options.maxBuffered ?? DEFAULT_MAX_BUFFERED, () =>
      this.#subscribers.delete(queue),
    );
    this.#subscribers.add(queue);
    return queue;
  }

  async close(): Promise<void> {
    for (const queue of [...this.#subscribers]) await queue.return();
  }
}

/** One subscriber: a bounded FIFO with at most one pending `next()` (as for-await uses it). */
class EventQueue implements AsyncIterableIterator<GatewayEvent> {
  readonly #filter: (event: GatewayEvent) => boolean;
  readonly #maxBuffered: number;
  readonly #onEnd: () => void;
  #buffer: GatewayEvent[] = [];
  #waiting: ((result: IteratorResult<GatewayEvent>) => void) | null = null;
  #failWaiting: ((error: unknown) => void) | null = null;
  #failure: Error | null = null;
  #ended = false;

  constructor(filter: (event: GatewayEvent) => boolean, maxBuffered: number, onEnd: () => void) {
    this.#filter = filter;
    this.#maxBuffered = maxBuffered;
    this.#onEnd = onEnd;
  }

  offer(event: GatewayEvent): void {
    if (this.#ended || !this.#filter(event)) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = null;
      this.#failWaiting = null;
      resolve({ value: event, done: false });
      return;
    }
    if (this.#buffer.length >= this.#maxBuffered) {
      this.#failure = new EventOverflowError(this.#maxBuffered);
      this.#buffer = [];
      this.#end();
      return;
    }
    this.#buffer.push(event);
  }

  next(): Promise<IteratorResult<GatewayEvent>> {
    const event = this.#buffer.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = null;
      return Promise.reject(failure);
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<GatewayEvent>> {
    this.#buffer = [];
    this.#failure = null;
    this.#end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error: unknown): Promise<IteratorResult<GatewayEvent>> {
    this.#end();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<GatewayEvent> {
    return this;
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
    const resolve = this.#waiting;
    const reject = this.#failWaiting;
    this.#waiting = null;
    this.#failWaiting = null;
    if (this.#failure && reject) {
      const failure = this.#failure;
      this.#failure = null;
      reject(failure);
    } else {
      resolve?.({ value: undefined, done: true });
    }
  }
}
