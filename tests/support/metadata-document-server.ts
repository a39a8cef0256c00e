// A loopback HTTPS server of client ID metadata documents for the OAuth tests, with a certificate
// for 127.0.0.1 and localhost issued by the test CA of tests/fixtures/tls (made once with openssl,
// valid until 2125; test material only: the keys secure nothing). A test passes the CA to an
// in-process gateway (its `cimd.ca` option) or to a gateway process as NODE_EXTRA_CA_CERTS.
// Routes: whatever `serve` sets (status, headers, body); `hang` answers nothing; `flood` sends a
// body far beyond the gateway's limit and records whether all of it was written. Every request is
// logged by path.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const TLS_DIR = new URL('../fixtures/tls/', import.meta.url);
export const TEST_CA_FILE = new URL('ca.pem', TLS_DIR).pathname;
export const TEST_CA = readFileSync(TEST_CA_FILE, 'utf8');

interface Route {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface MetadataDocumentServer {
  /** https://127.0.0.1:<port> */
  readonly origin: string;
  /** Paths requested, in order. */
  readonly requested: readonly string[];
  /** Serves `body` (JSON text or an object) at `path`. */
  serve(
    path: string,
    body: unknown,
    options?: { status?: number; headers?: Record<string, string> },
  ): string;
  /** A path that is answered with headers and then nothing. */
  hang(path: string): string;
  /** A path whose body is `bytes` long; `completed` says whether it was all written. */
  flood(path: string, bytes: number): { url: string; completed: () => boolean | undefined };
  close(): Promise<void>;
}

export async function startMetadataDocumentServer(): Promise<MetadataDocumentServer> {
  const routes = new Map<string, Route>();
  const hanging = new Set<string>();
  const floods = new Map<string, { bytes: number; completed: boolean | undefined }>();
  const requested: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer(
    {
      key: readFileSync(new URL('server.key', TLS_DIR)),
      cert: readFileSync(new URL('server.pem', TLS_DIR)),
    },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0] as string;
      requested.push(path);
      open.add(res);
      res.on('close', () => open.delete(res));
      if (hanging.has(path)) return;
      const flood = floods.get(path);
      if (flood) {
        res.writeHead(200, { 'content-type': 'application/json' });
        let sent = 0;
        const chunk = Buffer.alloc(1024, 0x20);
        const pump = () => {
          while (sent < flood.bytes) {
            sent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        res.on('close', () => {
          flood.completed = res.writableFinished;
        });
        pump();
        return;
      }
      const route = routes.get(path);
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(route.status, { 'content-type': 'application/json', ...route.headers });
      res.end(route.body);
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requested,
    serve(path, body, options = {}) {
      routes.set(path, {
        status: options.status ?? 200,
        headers: options.headers ?? {},
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return `${origin}${path}`;
    },
    hang(path) {
      hanging.add(path);
      return `${origin}${path}`;
    },
    flood(path, bytes) {
      const entry = { bytes, completed: undefined as boolean | undefined };
      floods.set(path, entry);
      return { url: `${origin}${path}`, completed: () => entry.completed };
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
