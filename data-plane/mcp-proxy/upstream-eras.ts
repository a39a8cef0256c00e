// Which protocol era each upstream server speaks, as the stateless service learns it
// (stateless.ts): from a server/discover asked before the first stateless request to a server,
// and from every answer since. An upstream that answers a stateless request with a 4xx that is
// not one of this era's errors speaks only the session era (what a session-era server answers a
// request without a session); anything else is taken to speak this era. What is learnt is
// remembered for ERA_MEMORY_MS per server key, and the requests that arrive while a server is
// being asked share the one question.
import { STATELESS_ERA_ERROR_CODES } from '../../shared/mcp/protocol.js';

export type UpstreamEra = 'stateless' | 'session';

/** How long what an upstream's answers said of its era is taken as known. */
export const ERA_MEMORY_MS = 5 * 60_000;

/** True when an answer is a session-era server's refusal of a request without a session. */
export function answersLikeSessionEra(
  status: number,
  response: { readonly error?: { readonly code?: number } | undefined } | undefined,
): boolean {
  if (status < 400 || status >= 500) return false;
  const code = response?.error?.code;
  return code === undefined || !STATELESS_ERA_ERROR_CODES.has(code);
}

export class UpstreamEras {
  readonly #known = new Map<string, { readonly era: UpstreamEra; readonly at: number }>();
  readonly #asking = new Map<string, Promise<UpstreamEra>>();

  /** The era `serverKey` is known to speak (this era until learnt otherwise). */
  known(serverKey: string): UpstreamEra {
    return this.#remembered(serverKey) ?? 'stateless';
  }

  /**
   * The era `serverKey` speaks: remembered, else `ask` answers it (one question at a time per
   * server). `ask` resolving undefined means it could not tell: this era, not remembered.
   */
  async learn(
    serverKey: string,
    ask: () => Promise<UpstreamEra | undefined>,
  ): Promise<UpstreamEra> {
    const remembered = this.#remembered(serverKey);
    if (remembered !== undefined) return remembered;
    let asking = this.#asking.get(serverKey);
    if (asking === undefined) {
      asking = ask()
        .then((era) => {
          if (era !== undefined) this.remember(serverKey, era);
          return era ?? 'stateless';
        })
        .finally(() => this.#asking.delete(serverKey));
      this.#asking.set(serverKey, asking);
    }
    return asking;
  }

  remember(serverKey: string, era: UpstreamEra): void {
    this.#known.set(serverKey, { era, at: Date.now() });
  }

  #remembered(serverKey: string): UpstreamEra | undefined {
    const known = this.#known.get(serverKey);
    if (known === undefined) return undefined;
    if (Date.now() - known.at < ERA_MEMORY_MS) return known.era;
    this.#known.delete(serverKey);
    return undefined;
  }
}
