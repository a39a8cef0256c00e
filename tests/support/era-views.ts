// Loopback relays that show a dual-era MCP server (the conformance project's reference server) as
// a server of one era only, so that a client of the other era, through the gateway, exercises the
// gateway's bridges against the same reference implementation (the relay of conformance.ts):
// - session-only: a POST without Mcp-Session-Id that is not `initialize` is refused as an SDK 1.x
//   server refuses it (400, JSON-RPC -32000, "no valid session ID"); everything else passes
//   (data-plane/mcp-proxy/session-bridge.ts is exercised);
// - stateless-only: `initialize` is refused as a server of 2026-07-28 only refuses it (400, -32022
//   UnsupportedProtocolVersion naming 2026-07-28); everything else passes
//   (data-plane/mcp-proxy/upstream/stateless-session.ts is exercised).
import { startRelay } from './conformance.js';

export interface EraView {
  /** The target URL with the relay's origin. */
  readonly url: string;
  /** Requests refused as the other era's. */
  readonly refused: number;
  close(): Promise<void>;
}

export async function startSessionOnlyView(target: string): Promise<EraView> {
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

export async function startStatelessOnlyView(target: string): Promise<EraView> {
  let refused = 0;
  const relay = await startRelay(target, {
    refuse(req, body) {
      if (req.method !== 'POST') return undefined;
      let message: { id?: unknown; method?: unknown; params?: { protocolVersion?: unknown } };
      try {
        message = JSON.parse(body.toString('utf8')) as typeof message;
      } catch {
        return undefined;
      }
      if (message.method !== 'initialize') return undefined;
      refused += 1;
      return {
        status: 400,
        body: {
          jsonrpc: '2.0',
          id: message.id ?? null,
          error: {
            code: -32022,
            message: 'Unsupported protocol version',
            data: {
              supported: ['2026-07-28'],
              requested: String(message.params?.protocolVersion ?? ''),
            },
          },
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
