// The queue's state as a pure reducer, so the rules that keep it correct live in one place:
// - a load replaces what it saw, but keeps the calls that arrived by event after it started (the
//   load may have read the database before they were held);
// - a decided call never comes back (an approval leaves PENDING for good), whatever a slow load says;
// - an expired call drops out when the clock passes its expiresAt.
import type { HeldCall } from './operations.ts';

export interface QueueState {
  /** Pending calls by id, each with the sequence number of the load or event that brought it. */
  readonly calls: ReadonlyMap<string, { readonly call: HeldCall; readonly seq: number }>;
  /** Ids decided (by anyone) since the screen opened. */
  readonly decided: ReadonlySet<string>;
  readonly loaded: boolean;
}

export type QueueAction =
  | { readonly type: 'loaded'; readonly seq: number; readonly calls: readonly HeldCall[] }
  | { readonly type: 'held'; readonly seq: number; readonly call: HeldCall }
  | { readonly type: 'decided'; readonly id: string };

export const EMPTY_QUEUE: QueueState = { calls: new Map(), decided: new Set(), loaded: false };

export function reduceQueue(state: QueueState, action: QueueAction): QueueState {
  switch (action.type) {
    case 'loaded': {
      const calls = new Map<string, { call: HeldCall; seq: number }>();
      for (const call of action.calls) {
        if (!state.decided.has(call.id)) calls.set(call.id, { call, seq: action.seq });
      }
      for (const [id, entry] of state.calls) {
        if (entry.seq > action.seq && !calls.has(id)) calls.set(id, entry);
      }
      return { ...state, calls, loaded: true };
    }
    case 'held': {
      if (state.decided.has(action.call.id) || action.call.status !== 'PENDING') return state;
      const calls = new Map(state.calls);
      calls.set(action.call.id, { call: action.call, seq: action.seq });
      return { ...state, calls };
    }
    case 'decided': {
      const calls = new Map(state.calls);
      calls.delete(action.id);
      return { ...state, calls, decided: new Set(state.decided).add(action.id) };
    }
  }
}

/** The calls still pending at `now`, the oldest (the first to expire) first. */
export function pendingAt(state: QueueState, now: number): HeldCall[] {
  return [...state.calls.values()]
    .map((entry) => entry.call)
    .filter((call) => Date.parse(call.expiresAt) > now)
    .sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt));
}
