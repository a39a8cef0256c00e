// Idempotent spawn: an Idempotency-Key (REST header, GraphQL idempotencyKey) replays the first
// answer's public parts — never the private key or the client secret — for 24 h per tenant and
// API key, and makes nothing; another body with the same key is 422 IDEMPOTENCY_KEY_REUSED;
// concurrent spawns with one key make one agent; an expired key is forgotten.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';
import { occurrences, type SpawnTestGateway, spawnBody, startSpawnGateway } from './support.js';

describeEachDatabase('idempotent spawn', (kind) => {
  let gateway: SpawnTestGateway;
  let tenantId: string;
  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
    tenantId = gateway.tenant.id;
  }, 60_000);
  afterAll(() => gateway?.close());

  it('replays the first answer without its secrets (200, replayed), making nothing', async () => {
    const body = spawnBody({ role: 'writer', ttl_seconds: 600 });
    const first = await gateway.spawn(body, { idempotencyKey: 'order-1' });
    expect(first.status).toBe(201);
    const after = await gateway.countWrites(tenantId);
    // The same body with its keys in another order and other spacing.
    const reordered = `{ "ttl_seconds": 600,\n "role": "writer", ${JSON.stringify(body).slice(1)}`;
    const replay = await gateway.spawn(reordered, { idempotencyKey: 'order-1' });
    expect(replay.status).toBe(200);
    expect(replay.cacheControl).toBe('no-store');
    expect(replay.body).toEqual({
      agent: first.body.agent,
      credential: first.body.credential,
      credentialId: first.body.credentialId,
      expiresAt: first.body.expiresAt,
      oauth: {
        client_id: first.body.oauth.client_id,
        token_endpoint: first.body.oauth.token_endpoint,
      },
      replayed: true,
    });
    expect(occurrences(replay.text, first.body.oauth.client_secret)).toBe(0);
    expect(occurrences(replay.text, first.body.private_key_jwk.d)).toBe(0);
    expect(await gateway.countWrites(tenantId)).toEqual(after);
  });

  it('replays across REST and GraphQL: one key, one request', async () => {
    const first = await gateway.spawn(
      spawnBody({ name: 'cross', allowed_tools: ['echo'], mcp_audiences: ['mcp://files'] }),
      { idempotencyKey: 'cross-1' },
    );
    expect(first.status).toBe(201);
    const after = await gateway.countWrites(tenantId);
    const replay = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      `mutation {
        spawnAgent(input: { name: "cross", systemPrompt: "You research and summarize.",
          persona: { tone: "terse", language: "en" }, allowedTools: ["echo"],
          mcpAudiences: ["mcp://files"], idempotencyKey: "cross-1" }) {
          agent { id } privateKeyJwk credentialId oauth { clientId clientSecret } replayed
        }
      }`,
    );
    expect(replay.errors).toBeUndefined();
    expect(replay.data.spawnAgent).toEqual({
      agent: { id: first.body.agent.id },
      privateKeyJwk: null,
      credentialId: first.body.credentialId,
      oauth: { clientId: first.body.oauth.client_id, clientSecret: null },
      replayed: true,
    });
    expect(await gateway.countWrites(tenantId)).toEqual(after);
  });

  it('refuses the same key with another body: 422 IDEMPOTENCY_KEY_REUSED, nothing written', async () => {
    const first = await gateway.spawn(spawnBody(), { idempotencyKey: 'order-2' });
    expect(first.status).toBe(201);
    const after = await gateway.countWrites(tenantId);
    const other = await gateway.spawn(spawnBody(), { idempotencyKey: 'order-2' });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({
      reasonCode: 'IDEMPOTENCY_KEY_REUSED',
      message: 'Idempotency-Key order-2 was used with another request body',
    });
    expect(await gateway.countWrites(tenantId)).toEqual(after);
    const viaGraphql = await graphql<Loose>(
      gateway.url,
      gateway.managerKey,
      `mutation { spawnAgent(input: { name: "x", systemPrompt: "", persona: { tone: "a", language: "b" },
        allowedTools: [], mcpAudiences: ["mcp://files"], idempotencyKey: "order-2" }) { replayed } }`,
    );
    expect(errorCodes(viaGraphql)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(await gateway.countWrites(tenantId)).toEqual(after);
  });

  it('keeps keys per API key: another key of the tenant spawns anew', async () => {
    const body = spawnBody();
    const first = await gateway.spawn(body, { idempotencyKey: 'shared-name' });
    const otherKey = await gateway.addApiKey(tenantId, ['agents:manage']);
    const second = await gateway.spawn(body, { idempotencyKey: 'shared-name', key: otherKey });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.agent.id).not.toBe(first.body.agent.id);
  });

  it('makes one agent of concurrent spawns with the same key', async () => {
    const body = spawnBody({ name: 'concurrent' });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => gateway.spawn(body, { idempotencyKey: 'race-1' })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const ids = new Set(answers.map((answer) => answer.body.agent.id));
    expect(ids.size).toBe(1);
    expect(await gateway.db.prisma.agent.count({ where: { tenantId, name: 'concurrent' } })).toBe(
      1,
    );
    expect(
      await gateway.db.prisma.oAuthClient.count({ where: { tenantId, name: 'concurrent' } }),
    ).toBe(1);
    const secrets = answers.filter((answer) => answer.body.oauth.client_secret !== undefined);
    expect(secrets).toHaveLength(1);
  });

  it('forgets an expired key: the same key spawns anew and replaces its row', async () => {
    const first = await gateway.spawn(spawnBody(), { idempotencyKey: 'old-1' });
    await gateway.db.prisma.spawnIdempotencyKey.updateMany({
      where: { tenantId, key: 'old-1' },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const again = await gateway.spawn(spawnBody(), { idempotencyKey: 'old-1' });
    expect(again.status).toBe(201);
    expect(again.body.agent.id).not.toBe(first.body.agent.id);
    const rows = await gateway.db.prisma.spawnIdempotencyKey.findMany({
      where: { tenantId, key: 'old-1' },
    });
    expect(rows.map((row) => row.agentId)).toEqual([again.body.agent.id]);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBe(24 * 3600 * 1000);
  });

  it('stores no secret with the key, only the public answer and the body hash', async () => {
    const first = await gateway.spawn(spawnBody(), { idempotencyKey: 'stored-1' });
    const row = await gateway.db.prisma.spawnIdempotencyKey.findFirstOrThrow({
      where: { tenantId, key: 'stored-1' },
    });
    expect(row.bodyHash).toMatch(/^[0-9a-f]{64}$/);
    const text = JSON.stringify(row);
    expect(text).not.toContain(first.body.oauth.client_secret);
    expect(text).not.toContain(first.body.private_key_jwk.d);
  });
});
