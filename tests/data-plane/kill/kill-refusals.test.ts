// Every input the kill route refuses, on both databases: the exact status and reasonCode, and
// proof that nothing was written — the agent is still active, it has no kill row, no agent.killed
// entry was audited, its credential is not revoked and inspect still lets it through. Then a
// fast-check fuzz of the route: whatever the path and body, never a 500, and a 4xx writes nothing.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { propertyRuns } from '../../support/property-runs.js';
import { type KillScene, postKill, startKillScene, type Victim } from './kill-fixture.js';

describeEachDatabase('kill route refusals', (kind) => {
  let scene: KillScene;
  let victim: Victim;
  let otherTenantKillKey: string;
  beforeAll(async () => {
    scene = await startKillScene(kind);
    victim = await scene.addVictim();
    const other = await scene.gateway.addTenant();
    otherTenantKillKey = await scene.gateway.addApiKey(other.id, ['agents:kill']);
  });
  afterAll(async () => {
    await scene?.close();
  });

  async function expectNothingWritten() {
    const { db } = scene.gateway;
    expect(await db.prisma.agentKill.count()).toBe(0);
    const agent = await db.prisma.agent.findUniqueOrThrow({ where: { id: victim.id } });
    expect(agent).toMatchObject({ status: 'active', killedAt: null, killedReason: null });
    const credential = await db.prisma.identityCredential.findFirstOrThrow({
      where: { agentId: victim.id },
    });
    expect(credential.revokedAt).toBeNull();
    expect(
      await db.prisma.oAuthClient.count({
        where: { agentId: victim.id, revokedAt: { not: null } },
      }),
    ).toBe(0);
    await scene.gateway.runtime.audit.flush();
    expect(await db.prisma.auditEntry.count({ where: { action: 'agent.killed' } })).toBe(0);
    expect(scene.gateway.runtime.store.kills.pendingAgents).toBe(0);
    const inspected = await scene.gateway.inspect(inspectBody(victim.id, { tool: 'echo' }));
    expect(inspected.status).toBe(200);
  }

  const key = () => victim.key.publicKeyMultibase;
  const ok = { reason: 'valid reason' };
  const cases: {
    name: string;
    publicKey?: () => string;
    body?: unknown;
    apiKey?: () => string | null;
    contentType?: string;
    status: number;
    code: string;
  }[] = [
    { name: 'no Authorization', apiKey: () => null, status: 401, code: 'AUTH_INVALID_API_KEY' },
    {
      name: 'a wrong API key',
      apiKey: () => 'agk_nope_nope',
      status: 401,
      code: 'AUTH_INVALID_API_KEY',
    },
    {
      name: 'a key without agents:kill',
      apiKey: () => scene.noKillKey,
      status: 403,
      code: 'AUTH_INSUFFICIENT_SCOPE',
    },
    {
      name: 'a path key that is not multibase',
      publicKey: () => 'not-a-key',
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a did:key instead of the key',
      publicKey: () => `did:key:${key()}`,
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a z6Mk key with a bad character',
      publicKey: () => `${key().slice(0, -1)}0`,
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a truncated key',
      publicKey: () => key().slice(0, 20),
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a key of another type (secp256k1 z Q3s…)',
      publicKey: () => 'zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme',
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'an over-long key',
      publicKey: () => `z6Mk${'a'.repeat(300)}`,
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'an unknown key',
      publicKey: () => generateEd25519KeyMaterial().publicKeyMultibase,
      status: 404,
      code: 'AGENT_NOT_FOUND',
    },
    {
      name: "another tenant's key (the agent is not in its tenant)",
      apiKey: () => otherTenantKillKey,
      status: 404,
      code: 'AGENT_NOT_FOUND',
    },
    { name: 'a missing reason', body: {}, status: 400, code: 'REQUEST_INVALID' },
    { name: 'an empty reason', body: { reason: '' }, status: 400, code: 'REQUEST_INVALID' },
    { name: 'a blank reason', body: { reason: ' \t ' }, status: 400, code: 'REQUEST_INVALID' },
    {
      name: 'a reason of 501 characters',
      body: { reason: 'x'.repeat(501) },
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a reason that is a number',
      body: { reason: 5 },
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'a reason with NUL',
      body: { reason: 'a\u0000b' },
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'an extra field',
      body: { reason: 'ok', force: true },
      status: 400,
      code: 'REQUEST_INVALID',
    },
    {
      name: 'snake_case extra (agent_id)',
      body: { reason: 'ok', agent_id: 'x' },
      status: 400,
      code: 'REQUEST_INVALID',
    },
    { name: 'a JSON array', body: [ok], status: 400, code: 'REQUEST_INVALID' },
    { name: 'JSON null', body: 'null', status: 400, code: 'REQUEST_INVALID' },
    { name: 'a body that is not JSON', body: '{"reason":', status: 400, code: 'REQUEST_INVALID' },
    { name: 'an empty body', body: '', status: 400, code: 'REQUEST_INVALID' },
    {
      name: 'a text/plain body',
      body: 'stop it',
      contentType: 'text/plain',
      status: 400,
      code: 'REQUEST_INVALID',
    },
  ];

  for (const c of cases) {
    it(`${c.status} ${c.code}: ${c.name}`, async () => {
      const answer = await postKill(
        scene.gateway,
        c.publicKey ? c.publicKey() : key(),
        c.body === undefined ? ok : c.body,
        c.apiKey ? c.apiKey() : scene.killKey,
        c.contentType ? { contentType: c.contentType } : {},
      );
      expect({ status: answer.status, code: answer.body.reasonCode }).toEqual({
        status: c.status,
        code: c.code,
      });
      await expectNothingWritten();
    });
  }

  describe('fuzz', () => {
    it('never answers 500; a refused request writes nothing', async () => {
      const base58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
      const pathKey = fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.string({ unit: fc.constantFrom(...base58), maxLength: 60 }).map((s) => `z6Mk${s}`),
        fc.constant('z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'),
      );
      const body = fc.oneof(
        fc.json({ maxDepth: 2 }),
        fc.record({
          reason: fc.oneof(fc.string({ maxLength: 600 }), fc.integer(), fc.constant(null)),
        }),
        fc.record({ reason: fc.string({ minLength: 1, maxLength: 20 }), extra: fc.anything() }),
        fc.string({ maxLength: 100 }),
      );
      await fc.assert(
        fc.asyncProperty(pathKey, body, async (publicKey, payload) => {
          if (publicKey.length === 0) return;
          const answer = await postKill(scene.gateway, publicKey, payload, scene.killKey);
          expect(answer.status).toBeLessThan(500);
          expect(answer.status).not.toBe(200);
          expect(typeof answer.body.reasonCode).toBe('string');
        }),
        { numRuns: propertyRuns(150) },
      );
      await expectNothingWritten();
    });
  });
});
