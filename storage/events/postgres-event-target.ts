// The PostgreSQL transport of the event bus (LISTEN/NOTIFY) for gateways that share one
// PostgreSQL: an event target for graphql-yoga's pub/sub (shared/events). An event dispatched here
// is delivered to this process's listeners at once and sent with NOTIFY to the others; one
// dedicated connection LISTENs and delivers what other processes sent. Each NOTIFY carries this
// target's origin id, so an event dispatched in this process is delivered here once, not a second
// time when its own notification comes back.
//
// Invariants: a payload stays under PostgreSQL's 8000-byte limit (the events dispatched in one
// tick are packed into chunks; an audit event too large alone loses its `action` hint, which
// subscribers treat as unknown); the channel is per schema, so gateways in different schemas of
// one server never see each other's events; a lost listening connection is re-established with
// exponential backoff (events sent while it is down are lost to this process: subscribers read
// the queries to catch up).
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  createEventBus,
  EVENT_TYPES,
  type EventBus,
  GATEWAY_EVENTS_TOPIC,
  type GatewayEvent,
  LocalEventTarget,
} from '../../shared/events/index.js';

/** Where the transport failed: sending, listening, or handing an event to a local subscriber. */
export type EventTransportProblem = 'notify' | 'listen' | 'deliver';

/** PostgreSQL rejects NOTIFY payloads of 8000 bytes or more; keep a margin. */
export const MAX_NOTIFY_BYTES = 7900;
const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;

export interface PostgresEventTargetOptions {
  readonly url: string;
  /** The schema the gateway's tables live in; it names the channel. Default `public`. */
  readonly schema?: string;
  /** Called when sending or listening fails (the bus keeps going). */
  readonly onError?: (error: unknown, during: EventTransportProblem) => void;
  /** Runs the NOTIFY statements; default: a small pool of its own. */
  readonly query?: (text: string, params: readonly unknown[]) => Promise<unknown>;
}

interface Notification {
  /** Origin: the publishing bus. */
  readonly o: string;
  readonly e: readonly GatewayEvent[];
}

/** The NOTIFY channel of a schema (an identifier of at most 63 bytes). */
export function nameEventChannel(schema = 'public'): string {
  const name = `agent_gateway_events_${schema}`;
  return name.length <= 63
    ? name
    : `agent_gateway_events_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/**
 * The event bus over PostgreSQL. Connects the listening connection first: resolves once events of
 * other processes arrive.
 */
export async function createPostgresEventBus(
  options: PostgresEventTargetOptions,
): Promise<EventBus> {
  const target = new PostgresEventTarget(options);
  try {
    await target.listen();
  } catch (error) {
    await target.close();
    throw error;
  }
  return createEventBus(target);
}

class PostgresEventTarget extends LocalEventTarget {
  readonly #origin = randomUUID();
  readonly #channel: string;
  readonly #options: PostgresEventTargetOptions;
  readonly #pool: pg.Pool | null;
  readonly #query: (text: string, params: readonly unknown[]) => Promise<unknown>;
  #client: pg.Client | null = null;
  #backoffMs = MIN_BACKOFF_MS;
  #retry: NodeJS.Timeout | null = null;
  /** Events dispatched in this tick, sent together when it ends. */
  #outbox: GatewayEvent[] = [];
  /** NOTIFYs sent and not yet answered: close() lets them finish. */
  readonly #sending = new Set<Promise<unknown>>();

  constructor(options: PostgresEventTargetOptions) {
    super({ onListenerError: (error) => options.onError?.(error, 'deliver') });
    this.#options = options;
    this.#channel = nameEventChannel(options.schema);
    if (options.query) {
      this.#pool = null;
      this.#query = options.query;
    } else {
      const pool = new pg.Pool({ connectionString: options.url, max: 2 });
      pool.on('error', () => {});
      this.#pool = pool;
      this.#query = (text, params) => pool.query(text, params as unknown[]);
    }
  }

  override get forwardsRemotely(): boolean {
    return true;
  }

  override dispatchEvent(event: Event): boolean {
    if (this.closed) return true;
    this.deliverLocally(event);
    const detail = (event as CustomEvent<GatewayEvent>).detail;
    if (this.#outbox.length === 0) queueMicrotask(() => this.#flush());
    this.#outbox.push(detail);
    return true;
  }

  #flush(): void {
    const events = this.#outbox;
    this.#outbox = [];
    for (const payload of packNotifications(this.#origin, events)) {
      const sent = this.#query('select pg_notify($1, $2)', [this.#channel, payload])
        .catch((error) => this.#options.onError?.(error, 'notify'))
        .finally(() => this.#sending.delete(sent));
      this.#sending.add(sent);
    }
  }

  async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#options.url });
    client.on('notification', (message) => this.#receive(message.payload));
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('listening connection ended')));
    await client.connect();
    await client.query(`listen "${this.#channel}"`);
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#backoffMs = MIN_BACKOFF_MS;
  }

  override async close(): Promise<void> {
    if (this.#outbox.length > 0) this.#flush();
    await super.close();
    if (this.#retry) clearTimeout(this.#retry);
    await Promise.all(this.#sending);
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
    await this.#pool?.end().catch(() => {});
  }

  #receive(payload: string | undefined): void {
    if (!payload) return;
    let notification: Notification;
    try {
      notification = JSON.parse(payload) as Notification;
    } catch {
      return;
    }
    if (notification.o === this.#origin || !Array.isArray(notification.e)) return;
    for (const event of notification.e) {
      if (isGatewayEvent(event)) {
        this.deliverLocally(new CustomEvent(GATEWAY_EVENTS_TOPIC, { detail: event }));
      }
    }
  }

  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client || this.closed) return;
    this.#client = null;
    this.#options.onError?.(error, 'listen');
    client.end().catch(() => {});
    this.#reconnect();
  }

  #reconnect(): void {
    if (this.closed || this.#retry) return;
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_BACKOFF_MS);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.listen().catch((error) => {
        this.#options.onError?.(error, 'listen');
        this.#reconnect();
      });
    }, delay);
    this.#retry.unref();
  }
}

/** The events as NOTIFY payloads, each under MAX_NOTIFY_BYTES. */
export function packNotifications(origin: string, events: readonly GatewayEvent[]): string[] {
  const head = `{"o":${JSON.stringify(origin)},"e":[`;
  const payloads: string[] = [];
  let parts: string[] = [];
  let size = Buffer.byteLength(head) + 2;
  for (const event of events) {
    const part = encodeEvent(event, MAX_NOTIFY_BYTES - Buffer.byteLength(head) - 2);
    if (part === null) continue;
    const partSize = Buffer.byteLength(part) + 1;
    if (parts.length > 0 && size + partSize > MAX_NOTIFY_BYTES) {
      payloads.push(`${head}${parts.join(',')}]}`);
      parts = [];
      size = Buffer.byteLength(head) + 2;
    }
    parts.push(part);
    size += partSize;
  }
  if (parts.length > 0) payloads.push(`${head}${parts.join(',')}]}`);
  return payloads;
}

function encodeEvent(event: GatewayEvent, limit: number): string | null {
  const json = JSON.stringify(event);
  if (Buffer.byteLength(json) <= limit) return json;
  if (event.type === EVENT_TYPES.AUDIT_APPENDED) {
    const bare = JSON.stringify({ ...event, entry: { id: event.entry.id } });
    if (Buffer.byteLength(bare) <= limit) return bare;
  }
  return null;
}

/** Every event type crosses processes (the kill events too: a data plane tells the control plane). */
const KNOWN_TYPES: ReadonlySet<unknown> = new Set(Object.values(EVENT_TYPES));

function isGatewayEvent(value: unknown): value is GatewayEvent {
  if (value === null || typeof value !== 'object') return false;
  const event = value as { type?: unknown; tenantId?: unknown };
  return typeof event.tenantId === 'string' && KNOWN_TYPES.has(event.type);
}
