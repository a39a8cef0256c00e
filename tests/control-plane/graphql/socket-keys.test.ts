// The per-socket key watch on its own, with a fake clock and stand-in sockets (the ws peer is
// what the subscription-keys tests drive for real): expiry timers, including an expiry beyond
// setTimeout's range, timers cleared on close, revocation by key id and the recheck.
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import type { Caller } from '../../../control-plane/graphql/context.js';
import { SocketKeys } from '../../../control-plane/graphql/socket-keys.js';

class StandInSocket extends EventEmitter {
  closes: [number, string][] = [];
  close(code: number, reason: string): void {
    this.closes.push([code, reason]);
    this.emit('close');
  }
}

const DAY = 24 * 3600 * 1000;

describe('SocketKeys', () => {
  /** The keys `authenticate` accepts now: header → caller. */
  const valid = new Map<string, Caller>();
  const authenticate = (header: string | undefined): Caller => {
    const caller = header === undefined ? undefined : valid.get(header);
    if (!caller || caller.expiresAtMs <= Date.now()) throw new Error('invalid API key');
    return caller;
  };
  const callerOf = (keyId: string, expiresAtMs = Number.POSITIVE_INFINITY): Caller => ({
    tenantId: 't',
    tenantName: 't',
    keyId,
    scopes: new Set(['audit:read']),
    expiresAtMs,
  });
  const open = (keys: SocketKeys, header: string) => {
    const socket = new StandInSocket();
    keys.watch(socket as unknown as WebSocket, header, authenticate(header));
    return socket;
  };

  beforeEach(() => {
    vi.useFakeTimers({ now: Date.UTC(2030, 0, 1) });
    valid.clear();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes a socket with 4401 when its key expires, not before', () => {
    valid.set('a', callerOf('a', Date.now() + 2_000));
    const keys = new SocketKeys(authenticate);
    const socket = open(keys, 'a');
    vi.advanceTimersByTime(1_999);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(socket.closes).toEqual([[4401, 'Unauthorized: API key expired']]);
    expect(keys.size).toBe(0);
  });

  it('reaches an expiry beyond setTimeout range in steps', () => {
    valid.set('far', callerOf('far', Date.now() + 40 * DAY));
    const keys = new SocketKeys(authenticate);
    const socket = open(keys, 'far');
    vi.advanceTimersByTime(30 * DAY);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(10 * DAY);
    expect(socket.closes).toEqual([[4401, 'Unauthorized: API key expired']]);
  });

  it('forgets a socket the client closed: its timer never fires', () => {
    valid.set('a', callerOf('a', Date.now() + 1_000));
    const keys = new SocketKeys(authenticate);
    const socket = open(keys, 'a');
    socket.emit('close');
    expect(keys.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('closeKey closes the sockets of that key only; recheck closes those that no longer pass', () => {
    valid.set('a', callerOf('a'));
    valid.set('b', callerOf('b'));
    const keys = new SocketKeys(authenticate);
    const [a1, a2, b] = [open(keys, 'a'), open(keys, 'a'), open(keys, 'b')];
    keys.closeKey('a');
    expect([a1.closes, a2.closes, b.closes]).toEqual([
      [[4401, 'Unauthorized: API key revoked']],
      [[4401, 'Unauthorized: API key revoked']],
      [],
    ]);
    keys.recheck();
    expect(b.closes).toEqual([]);
    valid.delete('b');
    keys.recheck();
    expect(b.closes).toEqual([[4401, 'Unauthorized: invalid API key']]);
    expect(keys.size).toBe(0);
  });
});
