// The console's GraphQL client: urql over HTTP for queries and mutations, graphql-ws for
// subscriptions, both authenticated by the signed-in API key. The CSRF header lets yoga's CSRF
// prevention accept the requests. Every connection of the socket after the first is reported, so
// live lists can reload what they may have missed while it was down. The socket is lazy but closes
// only a while after the last subscription ends: restarting a subscription (new variables, another
// screen) keeps it open rather than reconnecting, which live lists would take for a drop.
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createSocketClient, type Client as SocketClient } from 'graphql-ws';

export const GRAPHQL_PATH = '/graphql';

export interface ConsoleClient {
  readonly client: Client;
  /** The graphql-ws socket the client's subscriptions share (GraphiQL's run over it too). */
  readonly socket: SocketClient;
  /** Called after the socket connects again following a drop; returns an unsubscribe. */
  onReconnect(listener: () => void): () => void;
  dispose(): void;
}

export function authHeaders(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}`, 'x-agent-gateway-csrf': '1' };
}

export function createConsoleClient(apiKey: string): ConsoleClient {
  const listeners = new Set<() => void>();
  let connections = 0;
  const socketUrl = new URL(GRAPHQL_PATH, window.location.href);
  socketUrl.protocol = socketUrl.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = createSocketClient({
    url: socketUrl.toString(),
    connectionParams: { authorization: `Bearer ${apiKey}` },
    lazy: true,
    lazyCloseTimeout: 5_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    on: {
      connected: () => {
        connections += 1;
        if (connections > 1) for (const listener of listeners) listener();
      },
    },
  });
  const client = new Client({
    url: GRAPHQL_PATH,
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: authHeaders(apiKey) }),
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' };
          return {
            subscribe(sink) {
              const unsubscribe = socket.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return {
    client,
    socket,
    onReconnect(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dispose() {
      listeners.clear();
      void socket.dispose();
    },
  };
}
