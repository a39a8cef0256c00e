// A loopback relay that shows a dual-era MCP server (the conformance project's reference server)
// as a server of the session era only: a POST without Mcp-Session-Id that is not `initialize` is
// refused as an SDK 1.x server refuses it (400, JSON-RPC -32000, "no valid session ID"), and
// everything else (initialize, requests on a session, GET streams, DELETE) passes unchanged (the
// relay of conformance.ts). With it, a stateless client's run through the gateway exercises the
// gateway's bridge to a session (data-plane/mcp-proxy/session-bridge.ts) against the same
// reference implementation.
import { startRelay } from './conformance.js';

export interface SessionOnlyView {
  /** The target URL with the relay's origin. */
  readonly url: string;
  /** POSTs refused because they came without a session. */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startSessionOnlyView(target: string): Promise<SessionOnlyView> {
  let refused = 0;
  const relay = await startRelay(target, {
    refuse(req, body) {
      if (req.method !== 'POST' || req.headers['mcp-session-id'] !== undefined) return undefined;
      let method: unknown;
      try {
        method = (JSON.parse(body.toString('utf8')) as { method?: unknown }).method;
      } catch {
        method = undefined;
      }
      if (method === 'initialize') return undefined;
      refused += 1;
      return {
        status: 400,
        body: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
        },
      };
    },
  });
  return {
    url: relay.url,
    get refused() {
      return refused;
    },
    close: () => relay.close(),
  };
}
