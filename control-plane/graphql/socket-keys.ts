// The API key behind each open graphql-ws socket, watched for as long as the socket is open: a
// subscription streams for hours, so checking the key at connect and subscribe only would let a
// revoked or expired key keep reading. A socket is closed with 4401 when
//   - its key expires: a timer at the key's expiry (re-armed when it fires early or the expiry is
//     beyond setTimeout's range; cleared when the socket closes);
//   - its key is revoked: `closeKey` on the revocation event, which crosses processes over the
//     event bus (PostgreSQL LISTEN/NOTIFY), so every control plane closes its sockets at once;
//   - the keys change otherwise (`recheck` after each applied snapshot): the safety net for a
//     change that came without an event.
// The check is the caller's own `authenticate`, the same one every operation uses.
import type { WebSocket } from 'ws';
import type { Caller } from './context.js';

/** graphql-ws's Unauthorized close code (CloseCode.Unauthorized). */
export const UNAUTHORIZED_CLOSE_CODE = 4401;
/** setTimeout's largest delay; a later expiry is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Watched {
  readonly header: string | undefined;
  readonly keyId: string;
  timer: NodeJS.Timeout | undefined;
}

export class SocketKeys {
  readonly #authenticate: (authorization: string | undefined) => Caller;
  readonly #sockets = new Map<WebSocket, Watched>();

  constructor(authenticate: (authorization: string | undefined) => Caller) {
    this.#authenticate = authenticate;
  }

  /** Sockets watched now (open and authenticated). */
  get size(): number {
    return this.#sockets.size;
  }

  /** Watches an authenticated socket until it closes. */
  watch(socket: WebSocket, header: string | undefined, caller: Caller): void {
    if (this.#sockets.has(socket)) return;
    const watched: Watched = { header, keyId: caller.keyId, timer: undefined };
    this.#sockets.set(socket, watched);
    socket.once('close', () => this.#forget(socket));
    this.#armExpiry(socket, watched, caller.expiresAtMs);
  }

  /** Closes the sockets authenticated by this key (it was revoked). */
  closeKey(keyId: string): void {
    for (const [socket, watched] of this.#sockets) {
      if (watched.keyId === keyId) this.#close(socket, 'Unauthorized: API key revoked');
    }
  }

  /** Authenticates every socket again; closes those whose key no longer passes. */
  recheck(): void {
    for (const [socket, watched] of this.#sockets) {
      if (!this.#stillValid(watched)) this.#close(socket, 'Unauthorized: invalid API key');
    }
  }

  #armExpiry(socket: WebSocket, watched: Watched, expiresAtMs: number): void {
    if (!Number.isFinite(expiresAtMs)) return;
    const delay = Math.min(Math.max(expiresAtMs - Date.now(), 0), MAX_TIMER_MS);
    watched.timer = setTimeout(() => {
      watched.timer = undefined;
      const caller = this.#stillValid(watched);
      if (!caller) this.#close(socket, 'Unauthorized: API key expired');
      else this.#armExpiry(socket, watched, caller.expiresAtMs);
    }, delay);
    watched.timer.unref();
  }

  #stillValid(watched: Watched): Caller | undefined {
    try {
      const caller = this.#authenticate(watched.header);
      return caller.keyId === watched.keyId ? caller : undefined;
    } catch {
      return undefined;
    }
  }

  #close(socket: WebSocket, reason: string): void {
    this.#forget(socket);
    socket.close(UNAUTHORIZED_CLOSE_CODE, reason);
  }

  #forget(socket: WebSocket): void {
    const watched = this.#sockets.get(socket);
    if (!watched) return;
    clearTimeout(watched.timer);
    this.#sockets.delete(socket);
  }
}
