// The live queue of held calls: loaded with the `approvals(status: PENDING)` query, kept current by
// the `approvalQueue` subscription (a WAITING event replaces the call with its new
// clientWaitingUntil), and loaded again after every reconnect of the socket, since
// events sent while it was down are not replayed. `onHeld` hears of calls held while the screen is
// open (events, never the initial load), for the desktop notification.
import type { Client, CombinedError, OperationResult } from '@urql/core';
import { useCallback, useEffect, useReducer, useRef, useState } from 'react';
import { useClient } from 'urql';
import { type ResultOf, readFragment } from '../../graphql.ts';
import { useSession } from '../../session/session.tsx';
import { EMPTY_QUEUE, type QueueState, reduceQueue } from './held-calls.ts';
import {
  ApprovalQueueSubscription,
  type HeldCall,
  HeldCallFields,
  PendingApprovalsQuery,
} from './operations.ts';

const MAX_PAGES = 20;

/** Every pending call, page by page (bounded: a queue past the bound shows its newest pages). */
async function readAllPending(
  client: Client,
): Promise<{ calls: HeldCall[] } | { error: CombinedError }> {
  const calls: HeldCall[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result: OperationResult<ResultOf<typeof PendingApprovalsQuery>> = await client
      .query(PendingApprovalsQuery, { after }, { requestPolicy: 'network-only' })
      .toPromise();
    if (result.error) return { error: result.error };
    const approvals = result.data?.approvals;
    if (!approvals) break;
    for (const edge of approvals.edges) calls.push(readFragment(HeldCallFields, edge.node));
    if (!approvals.pageInfo.hasNextPage) break;
    after = approvals.pageInfo.endCursor ?? null;
  }
  return { calls };
}

export interface ApprovalQueue {
  readonly state: QueueState;
  /** The last failed load or subscription; cleared by the next good load. */
  readonly error: CombinedError | null;
  /** Takes a call out at once (the subscription confirms it), e.g. after deciding it here. */
  markDecided(id: string): void;
  reload(): void;
}

export function useApprovalQueue(
  enabled: boolean,
  onHeld: (call: HeldCall) => void,
): ApprovalQueue {
  const client = useClient();
  const { consoleClient } = useSession();
  const [state, dispatch] = useReducer(reduceQueue, EMPTY_QUEUE);
  const [error, setError] = useState<CombinedError | null>(null);
  const seq = useRef(0);
  const onHeldRef = useRef(onHeld);
  onHeldRef.current = onHeld;
  const known = useRef(new Set<string>());
  known.current = new Set(state.calls.keys());

  const reload = useCallback(() => {
    seq.current += 1;
    const started = seq.current;
    void readAllPending(client).then((result) => {
      if ('error' in result) {
        setError(result.error);
        return;
      }
      setError(null);
      dispatch({ type: 'loaded', seq: started, calls: result.calls });
    });
  }, [client]);

  useEffect(() => {
    if (!enabled) return;
    reload();
    const stopReconnect = consoleClient.onReconnect(reload);
    const { unsubscribe } = client
      .subscription(ApprovalQueueSubscription, {})
      .subscribe((result) => {
        if (result.error) {
          setError(result.error);
          return;
        }
        const event = result.data?.approvalQueue;
        if (!event) return;
        const call = readFragment(HeldCallFields, event.approval);
        if (event.kind === 'RESOLVED' || call.status !== 'PENDING') {
          dispatch({ type: 'decided', id: call.id });
          return;
        }
        seq.current += 1;
        // Announced once, when held: a WAITING event only updates a call already shown.
        const isNew = event.kind === 'CREATED' && !known.current.has(call.id);
        dispatch({ type: 'held', seq: seq.current, call });
        if (isNew) onHeldRef.current(call);
      });
    return () => {
      stopReconnect();
      unsubscribe();
    };
  }, [enabled, client, consoleClient, reload]);

  const markDecided = useCallback((id: string) => dispatch({ type: 'decided', id }), []);
  return { state, error, markDecided, reload };
}
