// Issue 22 item 2: a subscription lives only as long as its API key. With a real graphql-ws
// client against a real gateway, on both databases: revokeApiKey closes the key's sockets with
// 4401, its expiry closes them within a second, nothing is delivered after the close, and another
// key's subscription keeps streaming. On PostgreSQL, a revocation made at another control plane
// reaches this one over the event bus (LISTEN/NOTIFY) although its snapshot poll is far away.

import { type Client, createClient } from 'graphql-ws';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createApiKey, createTenant } from '../../../control-plane/services/tenants.js';
import { findPresentedKey } from '../../../data-plane/plugins/auth.js';
import { createReadiness } from '../../../http-edge/health.js';
import { buildGatewayRuntime, type GatewayRuntime } from '../../../runtime/gateway-runtime.js';
import type { EventBus } from '../../../shared/events/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { createPostgresEventBus } from '../../../storage/events/index.js';
import {
  createTestDatabase,
  describeEachDatabase,
  postgresUrl,
  type TestDatabase,
} from '../../support/databases.js';
import {
  RUNTIME_BUS_SUBSCRIPTIONS,
  startTestGateway,
  type TestGateway,
} from '../../support/gateway.js';
import { graphql, type Loose } from './support.js';

const AUDIT_TRAIL = 'subscription { auditTrail(action: "test.watched") { resourceId } }';
const REVOKE = 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }';
/**
 * How late a close may come after the revocation answered or the key expired. The design closes
 * at once (an event, a timer at the expiry); the bound is the second plus room for a busy
 * machine running the suite in parallel.
 */
const CLOSE_BOUND_MS = 1_500;

interface Watched {
  readonly client: Client;
  readonly received: string[];
  /** Resolves with the socket's close: code, reason and Date.now() when the client saw it. */
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
}

/** Subscribes to the audit trail over a new graphql-ws connection with `key`. */
function watch(url: string, key: string): Watched {
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    lazy: true,
  });
  const received: string[] = [];
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => {
    client.on('closed', (event) => {
      const { code, reason } = event as { code: number; reason: string };
      resolve({ code, reason, at: Date.now() });
    });
  });
  client.subscribe(
    { query: AUDIT_TRAIL },
    {
      next: (result) => received.push((result.data as Loose).auditTrail.resourceId),
      error: () => {},
      complete: () => {},
    },
  );
  return { client, received, closed };
}

/** Polls `check`; the timeout only ends a wait that would otherwise never end. */
async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const subscribed = (events: EventBus, count: number) =>
  until(
    () => events.subscriberCount >= RUNTIME_BUS_SUBSCRIPTIONS + count,
    `${count} subscriptions on the bus`,
  );

describeEachDatabase('subscriptions of a revoked or expired key', (kind) => {
  let gw: TestGateway;
  let admin: string;
  const clients: Client[] = [];
  const open = (key: string) => {
    const watched = watch(gw.url, key);
    clients.push(watched.client);
    return watched;
  };
  const append = (resourceId: string) =>
    gw.runtime.audit.append({
      tenantId: gw.tenant.id,
      action: 'test.watched',
      resourceType: 'test',
      resourceId,
    });
  const addKey = async (expiresAt?: Date) => {
    const created = await createApiKey(gw.db, {
      tenantId: gw.tenant.id,
      name: 'subscriber',
      scopes: ['audit:read'],
      expiresAt: expiresAt ?? null,
    });
    await gw.sync();
    return created;
  };

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await gw?.close();
  });

  it('revokeApiKey closes the subscriptions of the key with 4401; another key keeps its stream', async () => {
    const revoked = await addKey();
    const kept = await addKey();
    const gone = open(revoked.key);
    const staying = open(kept.key);
    await subscribed(gw.runtime.events, 2);
    await append('before');
    await until(() => gone.received.length === 1 && staying.received.length === 1, 'both live');

    const answer = await graphql<Record<string, Loose>>(gw.url, admin, REVOKE, {
      id: revoked.id,
    });
    const answeredAt = Date.now();
    expect(answer.data?.revokeApiKey.id).toBe(revoked.id);
    const close = await gone.closed;
    console.info(
      `[${kind}] revoked key's socket closed ${close.at - answeredAt} ms after the answer`,
    );
    expect(close.code).toBe(4401);
    expect(close.reason).toMatch(/revoked/);
    expect(close.at - answeredAt).toBeLessThan(CLOSE_BOUND_MS);
    // The server released the closed socket's subscription; the other one is still there.
    await until(
      () => gw.runtime.events.subscriberCount === RUNTIME_BUS_SUBSCRIPTIONS + 1,
      'the closed subscription to end',
    );

    await append('after');
    await until(() => staying.received.length === 2, 'the valid key to keep streaming');
    expect(staying.received).toEqual(['before', 'after']);
    expect(gone.received).toEqual(['before']);
    await staying.client.dispose();
  });

  it("a key's expiry closes its subscriptions with 4401 within a second, and nothing arrives after", async () => {
    // Long enough to subscribe and see an entry first on a busy machine, short enough to wait for.
    const expiresAt = new Date(Date.now() + 3_000);
    const expiring = await addKey(expiresAt);
    const watched = open(expiring.key);
    await subscribed(gw.runtime.events, 1);
    await append('live');
    await until(() => watched.received.length === 1, 'the entry before the expiry');

    const close = await watched.closed;
    const late = close.at - expiresAt.getTime();
    console.info(`[${kind}] expired key's socket closed ${late} ms after its expiry`);
    expect(close.code).toBe(4401);
    expect(close.reason).toMatch(/expired/);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(CLOSE_BOUND_MS);
    await until(
      () => gw.runtime.events.subscriberCount === RUNTIME_BUS_SUBSCRIPTIONS,
      'the closed subscription to end',
    );
    await append('after expiry');
    // Entries are delivered in order: one written after it reaching a live subscriber proves
    // 'after expiry' had its chance to arrive at the closed one.
    const witness = open(admin);
    await subscribed(gw.runtime.events, 1);
    await append('witness');
    await until(() => witness.received.includes('witness'), 'the witness entry');
    expect(watched.received).toEqual(['live']);
    await witness.client.dispose();
  });

  if (kind === 'pglite') {
    it.skip('a revocation at another control plane: PGlite is single-process by design, PostgreSQL only', () => {});
  } else {
    describe('split deployment: two control planes on one PostgreSQL', () => {
      let database: TestDatabase;
      const runtimes: GatewayRuntime[] = [];
      const urls: string[] = [];
      let tenantId: string;

      beforeAll(async () => {
        database = await createTestDatabase('postgres');
        for (let n = 0; n < 2; n++) {
          const readiness = createReadiness();
          const runtime = await buildGatewayRuntime({
            db: database.db,
            logger: pino({ level: 'silent' }),
            readiness,
            role: 'control-plane',
            // Far away: only the revocation event can close the other plane's socket in time.
            snapshotPollIntervalMs: 60_000,
            defaultMetrics: false,
            events: await createPostgresEventBus({ url: postgresUrl!, schema: database.schema }),
          });
          runtimes.push(runtime);
        }
        tenantId = (await createTenant(database.db, { name: 'split' })).id;
        for (const runtime of runtimes) {
          await runtime.publisher.start();
          await runtime.app.listen({ host: '127.0.0.1', port: 0 });
          urls.push(`http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`);
        }
      });
      afterAll(async () => {
        for (const runtime of runtimes) {
          await runtime.app.close();
          await runtime.stop();
        }
        await database?.dispose();
      });

      it('revokeApiKey at one control plane closes the socket at the other with 4401', async () => {
        const there = runtimes[1]!;
        const operator = await createApiKey(database.db, {
          tenantId,
          name: 'operator',
          scopes: ['keys:manage', 'audit:read'],
        });
        const subscriber = await createApiKey(database.db, {
          tenantId,
          name: 'subscriber',
          scopes: ['audit:read'],
        });
        await Promise.all(runtimes.map((runtime) => runtime.publisher.publishNow()));
        const watched = watch(urls[1]!, subscriber.key);
        clients.push(watched.client);
        await subscribed(there.events, 1);

        const answer = await graphql<Record<string, Loose>>(urls[0]!, operator.key, REVOKE, {
          id: subscriber.id,
        });
        const answeredAt = Date.now();
        expect(answer.data?.revokeApiKey.id).toBe(subscriber.id);
        const close = await watched.closed;
        console.info(
          `[postgres] socket at the other control plane closed ${close.at - answeredAt} ms after the answer`,
        );
        expect(close.code).toBe(4401);
        expect(close.at - answeredAt).toBeLessThan(CLOSE_BOUND_MS);
        // The other plane refuses the key at once too, without waiting for its poll.
        await until(() => {
          try {
            findPresentedKey(`Bearer ${subscriber.key}`, there.store.current);
            return false;
          } catch {
            return true;
          }
        }, 'the other plane to refuse the key');
      });
    });
  }
});
