// A CA key rotation between a spawn's allocation and its commit: the credential was signed by a
// key the rotation has retired (and did not re-issue, since it was not stored yet), so the spawn
// must sign again under the new key rather than commit a credential standard verifiers refuse.
// The rotation is run deterministically just before the spawn's commit transaction, by wrapping
// the database handle the service is given.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnAgent } from '../../../control-plane/services/agent-spawn.js';
import { rotateCaKey } from '../../../control-plane/services/agentiam/credentials.js';
import type { Database } from '../../../storage/engine/database.js';
import { verifyAsStandardVerifier } from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import { type SpawnTestGateway, startSpawnGateway } from './support.js';

const FIELDS = {
  mcpAudiences: 'mcp_audiences',
  allowedTools: 'allowed_tools',
  parentAgentId: 'parent_agent_id',
  publicKey: 'public_key',
  ttlSeconds: 'ttl_seconds',
};

describeEachDatabase('a spawn racing a CA key rotation', (kind) => {
  let gateway: SpawnTestGateway;
  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
  }, 60_000);
  afterAll(() => gateway?.close());

  it('signs again under the new key and commits a credential that verifies', async () => {
    const { runtime, db } = gateway;
    const tenantId = gateway.tenant.id;
    const services = {
      db,
      custody: runtime.keyCustody,
      publicUrl: runtime.publicUrl,
      audit: runtime.audit,
    };
    // The first spawn makes the tenant's CA key.
    const request = {
      name: 'rotating',
      systemPrompt: '',
      persona: { tone: 'plain', language: 'en' },
      allowedTools: ['echo'],
      mcpAudiences: ['mcp://files'],
    };
    const input = { tenantId, apiKeyId: 'k', actor: 'test', request, fields: FIELDS };
    const deps = { ...services, publisher: runtime.publisher, events: runtime.events };
    await spawnAgent(deps, input);
    const oldKey = await db.prisma.tenantSigningKey.findFirstOrThrow({
      where: { tenantId, status: 'active' },
    });

    // Transactions in order: allocate, commit (rotated first), allocate again, commit.
    let transactions = 0;
    const prisma = new Proxy(db.prisma, {
      get(target, property, receiver) {
        if (property !== '$transaction') return Reflect.get(target, property, receiver);
        return async (...args: unknown[]) => {
          transactions += 1;
          if (transactions === 2) await rotateCaKey(services, { tenantId, actor: 'test' });
          return (target.$transaction as (...a: unknown[]) => unknown)(...args);
        };
      },
    });
    const racing = { ...db, prisma } as Database;
    const outcome = await spawnAgent({ ...deps, db: racing }, input);
    expect(transactions).toBe(4);

    const newKey = await db.prisma.tenantSigningKey.findFirstOrThrow({
      where: { tenantId, status: 'active' },
    });
    expect(newKey.id).not.toBe(oldKey.id);
    const stored = await db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: outcome.credentialId },
    });
    expect(stored.signingKeyId).toBe(newKey.id);
    const verified = await verifyAsStandardVerifier(db, tenantId, outcome.credential);
    expect(verified.result.verified).toBe(true);
    expect(await db.prisma.agent.count({ where: { tenantId, name: 'rotating' } })).toBe(2);
  });
});
