// The spawnAgent mutation: the same service as the REST route, camelCase in and out, the secrets
// in its answer only, the same rules (REQUEST_INVALID naming input.<field>, AGENT_TOOLS_EXCEED_
// PARENT, AUTH_INSUFFICIENT_SCOPE), and nothing written by a refusal.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyAsStandardVerifier } from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';
import { type SpawnTestGateway, type SpawnWrites, startSpawnGateway } from './support.js';

const SPAWN = `mutation ($input: SpawnAgentInput!) {
  spawnAgent(input: $input) {
    agent { id name role did publicKey allowedTools mcpAudiences systemPrompt personaTone
            personaLanguage status parent { id } }
    privateKeyJwk credential credentialId expiresAt
    oauth { clientId clientSecret tokenEndpoint }
    replayed
  }
}`;

const input = (overrides: Record<string, unknown> = {}) => ({
  name: 'graphql-agent',
  systemPrompt: 'Answer briefly.',
  persona: { tone: 'warm', language: 'fr' },
  allowedTools: ['echo'],
  mcpAudiences: ['mcp://files'],
  ...overrides,
});

describeEachDatabase('the spawnAgent mutation', (kind) => {
  let gateway: SpawnTestGateway;
  let tenantId: string;
  let parentId: string;
  let baseline: SpawnWrites;
  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
    tenantId = gateway.tenant.id;
  }, 60_000);
  afterAll(() => gateway?.close());

  it('spawns with the secrets in the answer once, a credential that verifies, audited', async () => {
    const answer = await graphql<Loose>(gateway.url, gateway.managerKey, SPAWN, {
      input: input({ role: 'assistant', ttlSeconds: 120, supervisingUserId: 'bob' }),
    });
    expect(answer.errors).toBeUndefined();
    const spawned = answer.data.spawnAgent;
    parentId = spawned.agent.id;
    expect(spawned).toMatchObject({
      agent: {
        name: 'graphql-agent',
        role: 'assistant',
        did: `did:key:${spawned.agent.publicKey}`,
        allowedTools: ['echo'],
        mcpAudiences: ['mcp://files'],
        systemPrompt: 'Answer briefly.',
        personaTone: 'warm',
        personaLanguage: 'fr',
        status: 'active',
        parent: null,
      },
      privateKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: expect.any(String), d: expect.any(String) },
      oauth: {
        clientId: expect.stringMatching(/^agc_/),
        clientSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        tokenEndpoint: `${gateway.url}/oauth/token`,
      },
      replayed: false,
    });
    expect(Date.parse(spawned.expiresAt) - Date.parse(spawned.credential.issuanceDate)).toBe(
      120_000,
    );
    expect(spawned.credential.credentialSubject.supervisingUserId).toBe('bob');
    expect(
      (await verifyAsStandardVerifier(gateway.db, tenantId, spawned.credential)).result.verified,
    ).toBe(true);
    const client = await gateway.db.prisma.oAuthClient.findUniqueOrThrow({
      where: { id: spawned.oauth.clientId },
    });
    expect(client.secretHash).toBe(
      createHash('sha256').update(spawned.oauth.clientSecret).digest('hex'),
    );
    expect(
      await gateway.db.prisma.auditEntry.count({
        where: { tenantId, action: 'agent.spawned', resourceId: parentId },
      }),
    ).toBe(1);
    baseline = await gateway.countWrites(tenantId);
  });

  it('spawns a sub-agent naming its parent', async () => {
    const answer = await graphql<Loose>(gateway.url, gateway.managerKey, SPAWN, {
      input: input({ parentAgentId: parentId, publicKey: undefined }),
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data.spawnAgent.agent.parent).toEqual({ id: parentId });
    baseline = await gateway.countWrites(tenantId);
  });

  it.each([
    ['an empty name', { name: '' }, 'input.name'],
    ['a blank persona tone', { persona: { tone: ' ', language: 'en' } }, 'input.persona.tone'],
    ['no audience', { mcpAudiences: [] }, 'input.mcpAudiences'],
    ['an audience not mcp://', { mcpAudiences: ['files'] }, 'input.mcpAudiences.0'],
    ['an unregistered audience', { mcpAudiences: ['mcp://nowhere'] }, 'input.mcpAudiences.0'],
    ['a bad public key', { publicKey: 'z6Mkbad' }, 'input.publicKey'],
    ['ttlSeconds 59', { ttlSeconds: 59 }, 'input.ttlSeconds'],
    ['ttlSeconds 2592001', { ttlSeconds: 2_592_001 }, 'input.ttlSeconds'],
    ['an idempotency key with a space', { idempotencyKey: 'a b' }, 'input.idempotencyKey'],
  ])('%s: REQUEST_INVALID naming %s, nothing written', async (_case, change, field) => {
    const answer = await graphql(gateway.url, gateway.managerKey, SPAWN, {
      input: input(change),
    });
    expect(errorCodes(answer)).toEqual(['REQUEST_INVALID']);
    expect(JSON.stringify(answer.errors)).toContain(field);
    expect(await gateway.countWrites(tenantId)).toEqual(baseline);
  });

  it('tools beyond the parent’s: AGENT_TOOLS_EXCEED_PARENT; a missing parent: NOT_FOUND', async () => {
    const beyond = await graphql(gateway.url, gateway.managerKey, SPAWN, {
      input: input({ parentAgentId: parentId, allowedTools: ['echo', 'rm'] }),
    });
    expect(errorCodes(beyond)).toEqual(['AGENT_TOOLS_EXCEED_PARENT']);
    expect(beyond.errors?.[0]?.message).toContain('rm');
    const missing = await graphql(gateway.url, gateway.managerKey, SPAWN, {
      input: input({ parentAgentId: '00000000-0000-4000-8000-000000000000' }),
    });
    expect(errorCodes(missing)).toEqual(['NOT_FOUND']);
    expect(await gateway.countWrites(tenantId)).toEqual(baseline);
  });

  it('a key without agents:manage: AUTH_INSUFFICIENT_SCOPE', async () => {
    const executeOnly = await gateway.addApiKey(tenantId, ['agents:execute']);
    const answer = await graphql(gateway.url, executeOnly, SPAWN, { input: input() });
    expect(errorCodes(answer)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
    expect(await gateway.countWrites(tenantId)).toEqual(baseline);
  });
});
