// Spawn bodies made by fast-check from a valid one — fields removed, replaced by any JSON value or
// by edge values, unknown fields added — never make the gateway answer 500; every 4xx writes
// nothing and every 201 writes exactly one agent, credential and client.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../support/databases.js';
import { propertyRuns } from '../../support/property-runs.js';
import { type SpawnTestGateway, spawnBody, startSpawnGateway } from './support.js';

const FIELDS = [
  'name',
  'system_prompt',
  'persona',
  'allowed_tools',
  'mcp_audiences',
  'public_key',
  'role',
  'ttl_seconds',
  'parent_agent_id',
  'supervising_user_id',
] as const;

const edgeValue = fc.constantFrom<unknown>(
  '',
  ' ',
  null,
  0,
  -1,
  59,
  60,
  2_592_000,
  2_592_001,
  1.5,
  true,
  [],
  {},
  [''],
  ['mcp://files'],
  ['mcp://nowhere'],
  ['mcp://'],
  ['*'],
  'x'.repeat(300),
  { tone: 'a', language: 'b' },
  { tone: '', language: 'b' },
  'z6Mk',
  '00000000-0000-4000-8000-000000000000',
  '__proto__',
  '\u0000',
);

const mutation = fc.oneof(
  fc.constant<'keep'>('keep'),
  fc.constant<'delete'>('delete'),
  fc.record({ set: fc.oneof(fc.jsonValue({ maxDepth: 3 }), edgeValue) }),
);

const bodies = fc
  .record({
    changes: fc.array(fc.tuple(fc.constantFrom(...FIELDS), mutation), { maxLength: 4 }),
    extra: fc.option(fc.tuple(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))),
  })
  .map(({ changes, extra }) => {
    const body = spawnBody({ mcp_audiences: ['mcp://files'] });
    for (const [field, change] of changes) {
      if (change === 'delete') delete body[field];
      else if (change !== 'keep') body[field] = change.set;
    }
    if (extra) body[extra[0]] = extra[1];
    return body;
  });

describeEachDatabase('spawn bodies from fast-check', (kind) => {
  let gateway: SpawnTestGateway;
  let tenantId: string;
  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
    tenantId = gateway.tenant.id;
  }, 60_000);
  afterAll(() => gateway?.close());

  it('never answers 500; a refusal writes nothing, a spawn writes one of each', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const before = await gateway.countWrites(tenantId);
        const answer = await gateway.spawn(body);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect([201, 400, 403, 404]).toContain(answer.status);
        const after = await gateway.countWrites(tenantId);
        if (answer.status === 201) {
          expect(after).toEqual({
            agents: before.agents + 1,
            credentials: before.credentials + 1,
            clients: before.clients + 1,
            idempotencyKeys: before.idempotencyKeys,
            spawnedAudits: before.spawnedAudits + 1,
          });
        } else {
          expect(answer.body.reasonCode).toEqual(expect.any(String));
          expect(after).toEqual(before);
        }
      }),
      { numRuns: propertyRuns(150) },
    );
    // The generator reaches both outcomes.
    expect(statuses.get(201)).toBeGreaterThan(0);
    expect(statuses.get(400)).toBeGreaterThan(0);
  }, 120_000);
});
