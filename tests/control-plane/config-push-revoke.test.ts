// Revoking a data plane (`agent-gateway data-plane revoke --name <n>`): from then on the config
// stream and the acknowledgement refuse its credential, and a stream it holds open is closed by
// the next revocation sweep (one heartbeat period; shortened here). Real HTTP, real database.

import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConfigSnapshot } from '../../control-plane/snapshot/build-snapshot.js';
import { registerDataPlane, revokeDataPlane } from '../../control-plane/stream/credentials.js';
import { ConfigStreamHub } from '../../control-plane/stream/hub.js';
import { configStreamPlugin } from '../../control-plane/stream/plugin.js';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';
import { CONFIG_STREAM_PATH } from '../../shared/config-stream/protocol.js';
import { PublicUrl } from '../../shared/public-url.js';
import { killCliProcesses, runCliToEnd } from '../support/cli-process.js';
import { postAck } from '../support/config-stream.js';
import {
  createTestDatabase,
  describeEachDatabase,
  postgresUrl,
  type TestDatabase,
} from '../support/databases.js';

const SWEEP_MS = 100;

describeEachDatabase('data-plane revocation', (kind) => {
  let t: TestDatabase;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    const hub = new ConfigStreamHub({ heartbeatMs: 60_000 });
    hub.apply(await buildConfigSnapshot(t.db, 1));
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      readiness: createReadiness(),
    });
    await app.register(configStreamPlugin, {
      db: t.db,
      hub,
      publicUrl: new PublicUrl('http://gateway.test'),
      revocationCheckMs: SWEEP_MS,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await t?.dispose();
  });

  const connect = (credential: string) =>
    fetch(`${url}${CONFIG_STREAM_PATH}?since=0`, {
      headers: { authorization: `Bearer ${credential}` },
    });

  it('closes the open stream of a revoked data plane and refuses it from then on', async () => {
    const plane = await registerDataPlane(t.db, `dp-revoked-${kind}`);
    const other = await registerDataPlane(t.db, `dp-kept-${kind}`);
    const stream = await connect(plane.credential);
    const kept = await connect(other.credential);
    expect(stream.status).toBe(200);
    expect(kept.status).toBe(200);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('event: snapshot')) {
      const chunk = await reader.read();
      expect(chunk.done).toBe(false);
      received += decoder.decode(chunk.value);
    }

    const revoked = await revokeDataPlane(t.db, plane.name);
    expect(revoked.alreadyRevoked).toBe(false);
    const started = Date.now();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
    }
    // Only the revocation sweep closes it (the heartbeat is 60 s away): the bound only says it
    // ended, on a machine of any speed.
    expect(Date.now() - started).toBeLessThan(20_000);

    const again = await connect(plane.credential);
    expect(again.status).toBe(401);
    expect(((await again.json()) as { reasonCode?: string }).reasonCode).toBe(
      'DATA_PLANE_CREDENTIAL_INVALID',
    );
    const ack = await postAck(url, plane.credential, { version: 1 });
    expect(ack.status).toBe(401);
    await ack.arrayBuffer();

    // The other data plane's stream stays open through several sweeps.
    const keptReader = kept.body!.getReader();
    const pending = keptReader.read().then(() => keptReader.read());
    const outcome = await Promise.race([
      pending.then((chunk) => (chunk.done ? 'closed' : 'data')),
      new Promise((resolve) => setTimeout(() => resolve('open'), SWEEP_MS * 5)),
    ]);
    expect(outcome).toBe('open');
    await keptReader.cancel();

    const twice = await revokeDataPlane(t.db, plane.name);
    expect(twice).toMatchObject({ alreadyRevoked: true, revokedAt: revoked.revokedAt });
    await expect(revokeDataPlane(t.db, 'no-such-plane')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

(postgresUrl ? describe : describe.skip)('agent-gateway data-plane revoke', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterEach(killCliProcesses);
  afterAll(() => t?.dispose());

  it('sets revokedAt for the named data plane; an unknown name fails with NOT_FOUND', async () => {
    const env = { DATABASE_URL: postgresUrl, AGENT_GATEWAY_DB_SCHEMA: t.schema };
    await registerDataPlane(t.db, 'dp-cli');
    const revoked = await runCliToEnd(['data-plane', 'revoke', '--name', 'dp-cli'], env);
    expect(revoked.code, revoked.stderr.join('\n')).toBe(0);
    expect(revoked.stdout.join('\n')).toContain('revoked data plane "dp-cli"');
    const row = await t.db.prisma.dataPlane.findUniqueOrThrow({ where: { name: 'dp-cli' } });
    expect(row.revokedAt).toBeInstanceOf(Date);
    const unknown = await runCliToEnd(['data-plane', 'revoke', '--name', 'nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.some((line) => line.startsWith('NOT_FOUND: '))).toBe(true);
  });
});
