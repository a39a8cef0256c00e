// The loaded agents of the tenant, kept current: pages of the `agents` connection (100 each, by
// its cursors, more on request), agentEvents merged in as agents are spawned and killed, and a
// reload of every loaded page after the socket reconnects (events missed while it was down).
import type { CombinedError } from '@urql/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useClient } from 'urql';
import { useSession } from '../../session/session.tsx';
import { AgentEventsSubscription, type AgentRow, AgentsQuery } from './operations.ts';

export interface AgentList {
  readonly agents: readonly AgentRow[];
  readonly hasNextPage: boolean;
  readonly fetching: boolean;
  readonly error: CombinedError | null;
  loadMore(): void;
}

interface Loaded {
  readonly agents: readonly AgentRow[];
  readonly pages: number;
  readonly endCursor: string | null;
  readonly hasNextPage: boolean;
}

const EMPTY: Loaded = { agents: [], pages: 0, endCursor: null, hasNextPage: false };

/** Puts an agent as it is now into the list (or out of it, when it left the status filter). */
function mergeAgent(agents: readonly AgentRow[], agent: AgentRow, status: string | null) {
  const others = agents.filter((known) => known.id !== agent.id);
  return status === null || agent.status === status ? [...others, agent] : others;
}

export function useAgentList(status: string | null): AgentList {
  const client = useClient();
  const { consoleClient } = useSession();
  const [loaded, setLoaded] = useState<Loaded>(EMPTY);
  const [fetching, setFetching] = useState(true);
  const [error, setError] = useState<CombinedError | null>(null);
  // A newer load (another filter, a reconnect) makes the answers of older ones stale.
  const generation = useRef(0);
  const pagesRef = useRef(1);

  const load = useCallback(
    async (from: Loaded, pages: number) => {
      const mine = ++generation.current;
      setFetching(true);
      let next = from;
      while (next.pages < pages && (next.pages === 0 || next.hasNextPage)) {
        const result = await client
          .query(AgentsQuery, { status, after: next.endCursor }, { requestPolicy: 'network-only' })
          .toPromise();
        if (mine !== generation.current) return;
        if (!result.data) {
          setError(result.error ?? null);
          setFetching(false);
          return;
        }
        const page = result.data.agents;
        next = {
          agents: [...next.agents, ...page.edges.map((edge) => edge.node)],
          pages: next.pages + 1,
          endCursor: page.pageInfo.endCursor ?? next.endCursor,
          hasNextPage: page.pageInfo.hasNextPage,
        };
      }
      pagesRef.current = next.pages;
      setError(null);
      setLoaded(next);
      setFetching(false);
    },
    [client, status],
  );

  useEffect(() => {
    setLoaded(EMPTY);
    void load(EMPTY, 1);
    return consoleClient.onReconnect(() => void load(EMPTY, Math.max(1, pagesRef.current)));
  }, [load, consoleClient]);

  useEffect(() => {
    const subscription = client.subscription(AgentEventsSubscription, {}).subscribe((result) => {
      const event = result.data?.agentEvents;
      if (!event) return;
      setLoaded((current) => ({
        ...current,
        agents: mergeAgent(current.agents, event.agent, status),
      }));
    });
    return () => subscription.unsubscribe();
  }, [client, status]);

  const loadMore = useCallback(() => void load(loaded, loaded.pages + 1), [load, loaded]);

  return {
    agents: loaded.agents,
    hasNextPage: loaded.hasNextPage,
    fetching,
    error,
    loadMore,
  };
}
