// Every refusal of POST /api/v1/agents/spawn has its exact status and reasonCode and writes
// nothing: no agent, credential, OAuth client, idempotency key or agent.spawned entry. A public
// key another agent of the tenant holds fails on the unique constraint inside the spawn's one
// transaction, after the key was allocated and the credential signed: it proves the transaction
// leaves nothing behind.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import type { Loose } from '../graphql/support.js';
import {
  type SpawnAnswer,
  type SpawnTestGateway,
  type SpawnWrites,
  spawnBody,
  startSpawnGateway,
} from './support.js';

describeEachDatabase('refusing to spawn', (kind) => {
  let gateway: SpawnTestGateway;
  let tenantId: string;
  let managerKey: string;
  let parent: Loose;
  let killedParentId: string;
  let baseline: SpawnWrites;

  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
    const tenant = await gateway.addTenant();
    tenantId = tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'files', url: 'http://127.0.0.1:9/' });
    managerKey = await gateway.addApiKey(tenantId, ['agents:manage']);
    const body = { mcp_audiences: ['mcp://files'], allowed_tools: ['echo', 'search'] };
    parent = (await gateway.spawn(spawnBody(body), { key: managerKey })).body;
    const killed = (await gateway.spawn(spawnBody(body), { key: managerKey })).body;
    killedParentId = killed.agent.id;
    await gateway.db.prisma.agent.update({
      where: { id: killedParentId },
      data: { status: 'killed', killedAt: new Date(), killedReason: 'test' },
    });
    await gateway.sync();
    baseline = await gateway.countWrites(tenantId);
    expect(baseline).toMatchObject({ credentials: 2, clients: 2, spawnedAudits: 2 });
  }, 60_000);
  afterAll(() => gateway?.close());

  const valid = (overrides: Record<string, unknown> = {}) =>
    spawnBody({ mcp_audiences: ['mcp://files'], ...overrides });

  const expectRefused = async (
    answer: SpawnAnswer,
    status: number,
    reasonCode: string,
    field?: string,
  ) => {
    expect({ status: answer.status, reasonCode: answer.body.reasonCode }).toEqual({
      status,
      reasonCode,
    });
    expect(answer.body).toMatchObject({ error: reasonCode, message: expect.any(String) });
    if (field !== undefined) {
      expect(answer.body.message).toContain(field);
      if (reasonCode === 'REQUEST_INVALID') {
        expect(answer.body.issues.map((issue: Loose) => issue.field)).toContain(field);
      }
    }
    expect(await gateway.countWrites(tenantId)).toEqual(baseline);
  };

  it.each([
    ['name missing', { name: undefined }, 'name'],
    ['name empty', { name: '' }, 'name'],
    ['name only spaces', { name: '   ' }, 'name'],
    ['name too long', { name: 'n'.repeat(201) }, 'name'],
    // PostgreSQL text cannot hold NUL or a lone surrogate (found by the fuzz test: it was a 500).
    ['name with NUL', { name: 'a\u0000b' }, 'name'],
    ['system_prompt with a lone surrogate', { system_prompt: 'x\ud800y' }, 'system_prompt'],
    ['persona.tone with NUL', { persona: { tone: '\u0000', language: 'en' } }, 'persona.tone'],
    ['a tool name with NUL', { allowed_tools: ['ec\u0000ho'] }, 'allowed_tools.0'],
    ['system_prompt missing', { system_prompt: undefined }, 'system_prompt'],
    ['system_prompt not a string', { system_prompt: 42 }, 'system_prompt'],
    ['system_prompt too long', { system_prompt: 'p'.repeat(32_769) }, 'system_prompt'],
    ['persona missing', { persona: undefined }, 'persona'],
    ['persona.tone missing', { persona: { language: 'en' } }, 'persona.tone'],
    ['persona.language empty', { persona: { tone: 'terse', language: '' } }, 'persona.language'],
    [
      'persona.tone too long',
      { persona: { tone: 't'.repeat(201), language: 'en' } },
      'persona.tone',
    ],
    [
      'persona with an unknown key',
      { persona: { tone: 'a', language: 'b', voice: 'c' } },
      'persona.voice',
    ],
    ['allowed_tools missing', { allowed_tools: undefined }, 'allowed_tools'],
    ['allowed_tools not an array', { allowed_tools: 'echo' }, 'allowed_tools'],
    ['an empty tool name', { allowed_tools: ['echo', ''] }, 'allowed_tools.1'],
    ['a tool name too long', { allowed_tools: ['x'.repeat(257)] }, 'allowed_tools.0'],
    [
      'more than 1000 tools',
      { allowed_tools: Array.from({ length: 1001 }, (_, i) => `t${i}`) },
      'allowed_tools',
    ],
    ['mcp_audiences missing', { mcp_audiences: undefined }, 'mcp_audiences'],
    ['mcp_audiences empty', { mcp_audiences: [] }, 'mcp_audiences'],
    ['an audience not mcp://', { mcp_audiences: ['https://files'] }, 'mcp_audiences.0'],
    [
      'more than 100 audiences',
      { mcp_audiences: Array.from({ length: 101 }, () => 'mcp://files') },
      'mcp_audiences',
    ],
    ['public_key not z6Mk', { public_key: 'not-a-key' }, 'public_key'],
    ['public_key as a did:key', { public_key: `did:key:${newAgentPublicKey()}` }, 'public_key'],
    ['public_key truncated', { public_key: newAgentPublicKey().slice(0, -2) }, 'public_key'],
    ['role empty', { role: '' }, 'role'],
    ['role too long', { role: 'r'.repeat(101) }, 'role'],
    ['ttl_seconds below 60', { ttl_seconds: 59 }, 'ttl_seconds'],
    ['ttl_seconds above 30 days', { ttl_seconds: 2_592_001 }, 'ttl_seconds'],
    ['ttl_seconds as a string', { ttl_seconds: '3600' }, 'ttl_seconds'],
    ['ttl_seconds not whole', { ttl_seconds: 60.5 }, 'ttl_seconds'],
    ['ttl_seconds null', { ttl_seconds: null }, 'ttl_seconds'],
    ['parent_agent_id empty', { parent_agent_id: '' }, 'parent_agent_id'],
    ['supervising_user_id empty', { supervising_user_id: '' }, 'supervising_user_id'],
    [
      'supervising_user_id too long',
      { supervising_user_id: 'u'.repeat(257) },
      'supervising_user_id',
    ],
    ['an unknown field', { agent_id: 'x' }, 'agent_id'],
  ])('%s: 400 REQUEST_INVALID naming the field', async (_case, change, field) => {
    await expectRefused(
      await gateway.spawn(valid(change), { key: managerKey }),
      400,
      'REQUEST_INVALID',
      field,
    );
  });

  it.each([
    ['not JSON', '{"name": '],
    ['a JSON array', '[]'],
    ['a JSON string', '"spawn"'],
    ['empty', ''],
  ])('a body that is %s: 400 REQUEST_INVALID', async (_case, body) => {
    await expectRefused(await gateway.spawn(body, { key: managerKey }), 400, 'REQUEST_INVALID');
  });

  it('a text/plain body: 415 REQUEST_UNSUPPORTED_MEDIA_TYPE', async () => {
    const answer = await gateway.spawn(JSON.stringify(valid()), {
      key: managerKey,
      contentType: 'text/plain',
    });
    await expectRefused(answer, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
  });

  it('a body over 512 KiB: 413 REQUEST_TOO_LARGE', async () => {
    const answer = await gateway.spawn(valid({ system_prompt: 'p'.repeat(600 * 1024) }), {
      key: managerKey,
    });
    await expectRefused(answer, 413, 'REQUEST_TOO_LARGE');
    expect(answer.body).toMatchObject({
      message:
        'the body of POST /api/v1/agents/spawn is larger than its limit of 524288 bytes (512 KiB)',
      route: 'POST /api/v1/agents/spawn',
      limitBytes: 524288,
    });
  });

  it('no API key: 401 AUTH_INVALID_API_KEY', async () => {
    await expectRefused(await gateway.spawn(valid(), { key: null }), 401, 'AUTH_INVALID_API_KEY');
  });

  it('a key without agents:manage: 403 AUTH_INSUFFICIENT_SCOPE', async () => {
    const executeOnly = await gateway.addApiKey(tenantId, ['agents:execute', 'agents:kill']);
    const answer = await gateway.spawn(valid(), { key: executeOnly });
    await expectRefused(answer, 403, 'AUTH_INSUFFICIENT_SCOPE');
    expect(answer.body.requiredScope).toBe('agents:manage');
  });

  it('an audience naming no server of the tenant: 400 REQUEST_INVALID naming it', async () => {
    const unknown = await gateway.spawn(
      valid({ mcp_audiences: ['mcp://files', 'mcp://nowhere'] }),
      {
        key: managerKey,
      },
    );
    await expectRefused(unknown, 400, 'REQUEST_INVALID', 'mcp_audiences.1');
    expect(unknown.body.message).toContain('mcp://nowhere');
    // `mail` is registered in the first tenant only.
    const foreign = await gateway.spawn(valid({ mcp_audiences: ['mcp://mail'] }), {
      key: managerKey,
    });
    await expectRefused(foreign, 400, 'REQUEST_INVALID', 'mcp_audiences.0');
  });

  it('a public key another agent of the tenant holds: 400 REQUEST_INVALID, the transaction rolled back', async () => {
    const answer = await gateway.spawn(valid({ public_key: parent.agent.publicKey }), {
      key: managerKey,
    });
    await expectRefused(answer, 400, 'REQUEST_INVALID', 'public_key');
    // The status-list index it had allocated stays unused: no credential points at it.
    const list = await gateway.db.prisma.statusList.findFirstOrThrow({ where: { tenantId } });
    expect(list.nextIndex).toBe(3);
    expect(
      await gateway.db.prisma.identityCredential.count({
        where: { statusListId: list.id, statusListIndex: 2 },
      }),
    ).toBe(0);
  });

  it('the same public key in another tenant is accepted (keys are unique per tenant)', async () => {
    const other = await gateway.spawn(spawnBody({ public_key: parent.agent.publicKey }));
    expect(other.status).toBe(201);
    expect(other.body.private_key_jwk).toBeUndefined();
  });

  it('tools the parent does not hold: 400 AGENT_TOOLS_EXCEED_PARENT naming them', async () => {
    const answer = await gateway.spawn(
      valid({
        allowed_tools: ['echo', 'delete_all', 'search', 'read_*', '*'],
        parent_agent_id: parent.agent.id,
      }),
      { key: managerKey },
    );
    await expectRefused(answer, 400, 'AGENT_TOOLS_EXCEED_PARENT');
    expect(answer.body.message).toBe(
      `allowed_tools names tools the parent agent ${parent.agent.id} may not use: delete_all, read_*, *`,
    );
    expect(answer.body).toMatchObject({
      parentAgentId: parent.agent.id,
      tools: ['delete_all', 'read_*', '*'],
    });
  });

  it('an unknown parent, or one of another tenant: 404 NOT_FOUND', async () => {
    for (const parentId of ['00000000-0000-4000-8000-000000000000', gateway.tenant.agentId]) {
      const answer = await gateway.spawn(valid({ parent_agent_id: parentId }), {
        key: managerKey,
      });
      await expectRefused(answer, 404, 'NOT_FOUND', parentId);
    }
  });

  it('a killed parent: 403 AGENT_REVOKED', async () => {
    const answer = await gateway.spawn(
      valid({ allowed_tools: ['echo'], parent_agent_id: killedParentId }),
      { key: managerKey },
    );
    await expectRefused(answer, 403, 'AGENT_REVOKED', killedParentId);
  });

  it.each([
    ['empty', ''],
    ['with a space', 'a key'],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé'],
  ])('an Idempotency-Key %s: 400 REQUEST_INVALID', async (_case, idempotencyKey) => {
    const answer = await gateway.spawn(valid(), { key: managerKey, idempotencyKey });
    await expectRefused(answer, 400, 'REQUEST_INVALID', 'Idempotency-Key');
  });
});

describeEachDatabase('spawning without a master key', (kind) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/',
    });
  }, 60_000);
  afterAll(() => gateway?.close());

  it('503 SIGNING_KEY_UNAVAILABLE, and nothing written: no CA key, no agent', async () => {
    const key = await gateway.addApiKey(gateway.tenant.id, ['agents:manage']);
    const before = await gateway.db.prisma.agent.count();
    const response = await fetch(`${gateway.url}/api/v1/agents/spawn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(spawnBody({ mcp_audiences: ['mcp://files'] })),
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as Loose).reasonCode).toBe('SIGNING_KEY_UNAVAILABLE');
    expect(await gateway.db.prisma.agent.count()).toBe(before);
    expect(await gateway.db.prisma.tenantSigningKey.count()).toBe(0);
    expect(await gateway.db.prisma.oAuthClient.count()).toBe(0);
  });
});
