// Closing the server (Fastify's close: the preClose hooks, then node's server.close) waits for
// every connection to end. Node closes the connections that are idle at that moment, once; one
// still busy then (a forward in flight, a held call answered because the gateway stops, a GET
// stream ended) stays kept-alive after its last answer like any other, and the close waits for
// the client to drop it or for the keep-alive timeout (72 s), beyond any shutdown timeout. So
// while the server closes, its idle connections are closed every REAP_MS: each one ends as soon
// as its last answer is out. A timer only while closing; nothing per request.
import type { FastifyInstance } from 'fastify';

/** How soon a connection is closed once its last answer is out, while the server closes. */
export const REAP_MS = 100;

export function closeConnectionsWhenIdle(app: FastifyInstance): void {
  let reaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    reaper = setInterval(() => app.server.closeIdleConnections(), REAP_MS);
    reaper.unref();
  });
  app.addHook('onClose', async () => clearInterval(reaper));
}
