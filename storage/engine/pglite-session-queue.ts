// The order in which the embedded database's socket server hands its connections' protocol
// messages to PGlite's one session. It replaces the query queue of @electric-sql/pglite-socket
// 0.2.17 (pinned exactly; a test opens many connections at once and checks every answer), whose
// queue pins a connection only while a transaction is open. Outside a transaction an
// extended-protocol batch (Parse, Bind, Describe, Execute … Sync) is still one unit: the unnamed
// prepared statement and portal live until Sync. Interleaving two connections' batches made a
// Bind run against another connection's Parse — `26000 unnamed prepared statement does not exist`
// or, worse, another query's rows (upstream electric-sql/pglite#1046, PR #977 unmerged). A throw
// inside the upstream loop also stopped its queue for good; here a failed message is answered
// with the error and the queue goes on.
//
// Rule: the connection whose message ran last keeps the session until it has sent a Sync or a
// simple Query and no transaction is open. Messages of other connections wait in arrival order.
import type { PGlite } from '@electric-sql/pglite';

interface QueuedMessage {
  readonly handlerId: number;
  readonly message: Uint8Array;
  readonly onData: (data: Uint8Array) => void;
  readonly resolve: (bytes: number) => void;
  readonly reject: (error: unknown) => void;
}

/** Frontend message types that end a unit of work (Sync; simple Query runs to ReadyForQuery). */
const SYNC = 0x53; // 'S'
const SIMPLE_QUERY = 0x51; // 'Q'
/** Extended-protocol messages that leave per-session state (unnamed statement, portal) behind. */
const EXTENDED = new Set([
  0x50, // 'P' Parse
  0x42, // 'B' Bind
  0x44, // 'D' Describe
  0x45, // 'E' Execute
  0x43, // 'C' Close
  0x48, // 'H' Flush
]);

/** The interface the socket server's connection handlers call (same names as upstream's queue). */
export class PGliteSessionQueue {
  readonly #db: PGlite;
  #queue: QueuedMessage[] = [];
  #processing = false;
  /** The connection that holds the session, or null when any may take it. */
  #owner: number | null = null;

  constructor(db: PGlite) {
    this.#db = db;
  }

  enqueue(
    handlerId: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ handlerId, message, onData, resolve, reject });
      void this.#process();
    });
  }

  getQueueLength(): number {
    return this.#queue.length;
  }

  /** A connection went away: its waiting messages are refused. */
  clearQueueForHandler(handlerId: number): void {
    this.#queue = this.#queue.filter((entry) => {
      if (entry.handlerId !== handlerId) return true;
      entry.reject(new Error('connection closed'));
      return false;
    });
  }

  /** A connection went away holding the session: roll back what it left open and release it. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.#owner !== handlerId) return;
    if (this.#db.isInTransaction()) await this.#db.exec('ROLLBACK').catch(() => {});
    this.#owner = null;
    await this.#process();
  }

  async #process(): Promise<void> {
    if (this.#processing) return;
    this.#processing = true;
    try {
      for (let entry = this.#next(); entry !== undefined; entry = this.#next()) {
        let bytes = 0;
        try {
          await this.#db.runExclusive(() =>
            this.#db.execProtocolRawStream(entry.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                entry.onData(data);
              },
            }),
          );
        } catch (error) {
          // PGlite answers SQL errors on the wire; a throw is the session failing. Release it so
          // the other connections are not stuck behind this one.
          this.#owner = null;
          entry.reject(error);
          continue;
        }
        this.#afterMessage(entry);
        entry.resolve(bytes);
      }
    } finally {
      this.#processing = false;
    }
  }

  /** The owner's next message; any first message when nobody owns the session; else none. */
  #next(): QueuedMessage | undefined {
    if (this.#owner === null) return this.#queue.shift();
    const index = this.#queue.findIndex((entry) => entry.handlerId === this.#owner);
    return index < 0 ? undefined : this.#queue.splice(index, 1)[0];
  }

  #afterMessage(entry: QueuedMessage): void {
    const type = entry.message[0];
    if (type === SYNC || type === SIMPLE_QUERY) {
      this.#owner = this.#db.isInTransaction() ? entry.handlerId : null;
    } else if (type !== undefined && EXTENDED.has(type)) {
      this.#owner = entry.handlerId;
    } else if (this.#db.isInTransaction()) {
      this.#owner = entry.handlerId;
    }
  }
}
