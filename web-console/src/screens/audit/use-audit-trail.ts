// The entries the audit screen shows: pages of the auditTrail query (newest first, "load more"
// follows the cursor) with the live tail of the auditTrail subscription on top, both with the
// same filters. A paused tail keeps listening and holds new entries back until it is resumed, so
// pausing never loses one; a reconnect of the socket reloads the first page to catch up on what
// arrived while it was down. Entries are kept unique by id (a page and the tail may overlap).
import type { CombinedError } from '@urql/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient } from 'urql';
import { useSession } from '../../session/session.tsx';
import type { AuditFilterVariables } from './filters.ts';
import { type AuditEntry, AuditTrailQuery, AuditTrailSubscription } from './queries.ts';

export const PAGE_SIZE = 50;

export interface AuditTrail {
  readonly entries: readonly AuditEntry[];
  /** Live entries held back while paused, newest first. */
  readonly held: readonly AuditEntry[];
  readonly loading: boolean;
  readonly hasMore: boolean;
  readonly error: CombinedError | null;
  readonly liveError: CombinedError | null;
  loadMore(): void;
  reload(): void;
  /** Shows the held entries (on resume). */
  release(): void;
}

/** `incoming` before `current`, without an id twice. */
function mergeNewestFirst(
  incoming: readonly AuditEntry[],
  current: readonly AuditEntry[],
): AuditEntry[] {
  const seen = new Set(incoming.map((entry) => entry.id));
  return [...incoming, ...current.filter((entry) => !seen.has(entry.id))];
}

/** The entries of `current` appended after `newest` (live ones a first page does not have yet). */
function newerThan(current: readonly AuditEntry[], newest: AuditEntry | undefined): AuditEntry[] {
  if (!newest) return [...current];
  const seq = BigInt(newest.seq);
  return current.filter((entry) => BigInt(entry.seq) > seq);
}

export function useAuditTrail(variables: AuditFilterVariables, paused: boolean): AuditTrail {
  const client = useClient();
  const { consoleClient } = useSession();
  const key = JSON.stringify(variables);
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [held, setHeld] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<CombinedError | null>(null);
  const [liveError, setLiveError] = useState<CombinedError | null>(null);
  // Answers to an older filter (or an older reload) are dropped.
  const generation = useRef(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  const fetchPage = useCallback(
    async (after: string | null) => {
      const mine = generation.current;
      setLoading(true);
      const result = await client
        .query(
          AuditTrailQuery,
          { ...(JSON.parse(key) as AuditFilterVariables), first: PAGE_SIZE, after },
          { requestPolicy: 'network-only' },
        )
        .toPromise();
      if (mine !== generation.current) return;
      setLoading(false);
      setError(result.error ?? null);
      const page = result.data?.auditTrail;
      if (!page) return;
      const nodes = page.edges.map((edge) => edge.node);
      setEntries((current) =>
        after === null
          ? mergeNewestFirst(newerThan(current, nodes[0]), nodes)
          : mergeNewestFirst(current, nodes),
      );
      setCursor(page.pageInfo.endCursor ?? null);
      setHasMore(page.pageInfo.hasNextPage);
    },
    [client, key],
  );

  // A reload (after a reconnect) keeps the rows on screen until the first page replaces them.
  const reload = useCallback(() => {
    generation.current += 1;
    void fetchPage(null);
  }, [fetchPage]);

  // New filters: the rows of the old ones go at once.
  useEffect(() => {
    setEntries([]);
    setHeld([]);
    reload();
  }, [reload]);
  useEffect(() => consoleClient.onReconnect(reload), [consoleClient, reload]);

  useEffect(() => {
    const subscription = client
      .subscription(AuditTrailSubscription, JSON.parse(key) as AuditFilterVariables)
      .subscribe((result) => {
        setLiveError(result.error ?? null);
        const entry = result.data?.auditTrail;
        if (!entry) return;
        if (pausedRef.current) setHeld((current) => mergeNewestFirst([entry], current));
        else setEntries((current) => mergeNewestFirst([entry], current));
      });
    return () => subscription.unsubscribe();
  }, [client, key]);

  const loadMore = useCallback(() => {
    if (cursor) void fetchPage(cursor);
  }, [cursor, fetchPage]);

  const release = useCallback(() => {
    setEntries((shown) => mergeNewestFirst(held, shown));
    setHeld([]);
  }, [held]);

  return { entries, held, loading, hasMore, error, liveError, loadMore, reload, release };
}
