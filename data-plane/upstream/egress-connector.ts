// The one way the gateway opens a connection to an upstream: an undici connector that passes the
// egress policy (shared/egress, DESIGN.md §12) on the address actually connected to. Every pool
// the forwarding client and the MCP proxy's upstream sessions open is built with it, so a
// forward, a proxy session, a tools/list refresh and anything later added on these pools are
// checked alike, at connect time, after DNS resolution:
// - an IP literal (undici hands it over without brackets) is decided before connecting;
// - a host name is resolved by the socket's `lookup`, which is the egress check itself: it
//   resolves through the injected resolver, decides every address, and answers the socket only
//   with the addresses it decided, so no second resolution can bring another one (DNS rebinding
//   between a check and the connect is impossible by construction).
// A refusal fails the connection with UPSTREAM_ADDRESS_FORBIDDEN before any byte is sent, once
// `onRefused` (the audit entry) has settled. Keep-alive connections opened to an allowed address
// stay in use until they close; redirects are never followed (nothing here follows them).

import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import {
  checkEgress,
  type Egress,
  type EgressRefusal,
  type EgressResolver,
  EMPTY_EGRESS_POLICY,
} from '../../shared/egress/index.js';
import { upstreamForbidden } from './errors.js';

/** The egress check of an upstream connection, and who hears about each refusal. */
export interface UpstreamEgress extends Egress {
  /**
   * Called once per refused connection with the pool's server key (`tenantId/serverId`), before
   * the connection fails: the composition audits the refusal here. A rejection is ignored.
   */
  readonly onRefused?: (refusal: EgressRefusal, serverKey: string) => Promise<void> | void;
}

/** node's resolver, as the socket would use it: every address, in the system's order. */
export const resolveWithDns: EgressResolver = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

/** The built-in policy with node's resolver: what a client gets when it is given none. */
export const DEFAULT_UPSTREAM_EGRESS: UpstreamEgress = {
  policy: EMPTY_EGRESS_POLICY,
  resolve: resolveWithDns,
};

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** An undici `connect` for the pool of `serverKey` that refuses what the egress policy forbids. */
export function createEgressConnector(
  egress: UpstreamEgress,
  serverKey: string,
  timeoutMs: number,
): buildConnector.connector {
  const refused = async (refusal: EgressRefusal): Promise<Error> => {
    try {
      await egress.onRefused?.(refusal, serverKey);
    } catch {
      // The refusal stands whether or not it could be recorded.
    }
    return upstreamForbidden(refusal.detail);
  };
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    checkEgress(egress, hostname).then(
      async (check) => {
        if (!check.allowed) {
          callback((await refused(check.refusal)) as NodeJS.ErrnoException, '');
          return;
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = check.addresses.filter(
          (entry) => family === 0 || entry.family === family,
        );
        if (options.all) {
          callback(
            null,
            addresses.map((entry) => ({ ...entry })),
          );
          return;
        }
        const first = addresses[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`no IPv${family} address`), { code: 'ENOTFOUND' }), '');
          return;
        }
        callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
  const connect = buildConnector({ timeout: timeoutMs, lookup } as buildConnector.BuildOptions);
  return (options, callback) => {
    // A literal never reaches `lookup` (net connects to it directly): it is decided here.
    if (isIP(options.hostname) === 0) {
      connect(options, callback);
      return;
    }
    checkEgress(egress, options.hostname).then(
      async (check) => {
        if (check.allowed) connect(options, callback);
        else callback(await refused(check.refusal), null);
      },
      (error: unknown) => callback(error as Error, null),
    );
  };
}
