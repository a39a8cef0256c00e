// Resumability of the proxy's own event streams (the transport spec's Last-Event-ID): every event
// of a call's SSE stream carries an id `<stream>:<seq>` and is kept, bounded, until the stream's
// last response; a client whose connection broke GETs the endpoint with `Last-Event-ID` and gets
// what it missed, then the rest of the stream as it comes. The call itself goes on while the
// client is away (a disconnection is not a cancellation), so a held call that waits minutes for
// an operator survives a dropped connection. Per session; a session's logs end with it.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Events kept per stream; a client that missed more cannot resume (400, then it retries). */
export const MAX_EVENTS_PER_STREAM = 1_000;
/** Streams kept per session, oldest finished dropped first. */
export const MAX_STREAMS_PER_SESSION = 256;

export interface StreamLog {
  readonly id: string;
  /** Events by sequence number, starting at `first`. */
  readonly events: string[];
  first: number;
  next: number;
  done: boolean;
  /** Where new events go: the original connection, a resumed one, or nowhere (client away). */
  sink: ServerResponse | undefined;
}

export class ReplayLogs {
  readonly #logs = new Map<string, StreamLog>();

  open(sink: ServerResponse): StreamLog {
    const log: StreamLog = {
      id: randomBytes(9).toString('base64url'),
      events: [],
      first: 0,
      next: 0,
      done: false,
      sink,
    };
    this.#logs.set(log.id, log);
    if (this.#logs.size > MAX_STREAMS_PER_SESSION) this.#evict();
    return log;
  }

  /** Appends an event (its id assigned here) and writes it to the stream's current sink. */
  write(log: StreamLog, data: string): void {
    const event = `id: ${log.id}:${log.next}\nevent: message\ndata: ${data}\n\n`;
    log.next += 1;
    log.events.push(event);
    if (log.events.length > MAX_EVENTS_PER_STREAM) {
      log.events.shift();
      log.first += 1;
    }
    const sink = log.sink;
    if (sink && !sink.writableEnded && !sink.destroyed) sink.write(event);
  }

  /** The stream ended with its last response: its sink ends; the log stays for late resumers. */
  finish(log: StreamLog): void {
    log.done = true;
    const sink = log.sink;
    if (sink && !sink.writableEnded) sink.end();
    log.sink = undefined;
  }

  /**
   * Resumes the stream an event id names on `res` (its SSE headers already written): replays the
   * events after it, then either ends (the stream is over) or makes `res` the stream's sink.
   * False when the id names no stream kept here, or events after it were dropped.
   */
  resume(lastEventId: string, res: ServerResponse): boolean {
    const found = this.#find(lastEventId);
    return found !== undefined && this.#attach(found.log, found.seq + 1, res);
  }

  /** Whether `resume` would succeed for this event id. */
  canResume(lastEventId: string): boolean {
    return this.#find(lastEventId) !== undefined;
  }

  #find(lastEventId: string): { log: StreamLog; seq: number } | undefined {
    const colon = lastEventId.lastIndexOf(':');
    if (colon <= 0) return undefined;
    const log = this.#logs.get(lastEventId.slice(0, colon));
    const seq = Number(lastEventId.slice(colon + 1));
    if (!log || !Number.isInteger(seq) || seq + 1 < log.first || seq >= log.next) return undefined;
    return { log, seq };
  }

  #attach(log: StreamLog, from: number, res: ServerResponse): boolean {
    for (let seq = from; seq < log.next; seq++) res.write(log.events[seq - log.first]);
    if (log.done) {
      res.end();
      return true;
    }
    const previous = log.sink;
    if (previous && previous !== res && !previous.writableEnded) previous.end();
    log.sink = res;
    res.once('close', () => {
      if (log.sink === res) log.sink = undefined;
    });
    return true;
  }

  #evict(): void {
    for (const [id, log] of this.#logs) {
      if (log.done) {
        this.#logs.delete(id);
        return;
      }
    }
    const oldest = this.#logs.keys().next().value;
    if (oldest !== undefined) this.#logs.delete(oldest);
  }
}
