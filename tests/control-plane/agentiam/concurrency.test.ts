// Issuers racing on a tenant that has no CA key yet: the tenant row lock serializes key creation
// and index allocation, so twenty concurrent issues make exactly one key, one status list and
// twenty distinct entries, and every credential verifies.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentIamTestGateway,
  startAgentIamGateway,
  verifyAsStandardVerifier,
} from '../../support/agentiam.js';
import { describeEachDatabase } from '../../support/databases.js';
import type { Loose } from '../graphql/support.js';

const ISSUERS = 20;

describeEachDatabase('concurrent issuance', (kind) => {
  let gateway: AgentIamTestGateway;
  beforeAll(async () => {
    gateway = await startAgentIamGateway(kind);
  }, 60_000);
  afterAll(() => gateway?.close());

  it(`${ISSUERS} concurrent issues for a new tenant create one CA key and ${ISSUERS} distinct indexes`, async () => {
    const tenant = await gateway.addTenant();
    const key = await gateway.addApiKey(tenant.id, ['agents:manage']);
    const agentId = await gateway.addKeyedAgent(tenant.id);
    const answers = await Promise.all(
      Array.from({ length: ISSUERS }, (_, n) =>
        gateway.issue({ agent_id: agentId, supervising_user_id: `user-${n}` }, { key }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(ISSUERS).fill(201));

    const { prisma } = gateway.db;
    const keys = await prisma.tenantSigningKey.findMany({ where: { tenantId: tenant.id } });
    expect(keys).toHaveLength(1);
    expect(await prisma.statusList.count({ where: { tenantId: tenant.id } })).toBe(1);
    const stored = await prisma.identityCredential.findMany({ where: { tenantId: tenant.id } });
    expect(stored).toHaveLength(ISSUERS);
    expect(new Set(stored.map((credential) => credential.signingKeyId))).toEqual(
      new Set([keys[0]?.id]),
    );
    expect(stored.map((credential) => credential.statusListIndex).sort((a, b) => a - b)).toEqual(
      Array.from({ length: ISSUERS }, (_, index) => index),
    );
    const indexes = answers.map(
      (answer) => (answer.body.credential as Loose).credentialStatus.statusListIndex,
    );
    expect(new Set(indexes).size).toBe(ISSUERS);
    expect(
      await prisma.auditEntry.count({
        where: { tenantId: tenant.id, action: 'signing_key.created' },
      }),
    ).toBe(1);
    for (const answer of answers) {
      const verified = await verifyAsStandardVerifier(
        gateway.db,
        tenant.id,
        answer.body.credential,
      );
      expect(verified.result.verified).toBe(true);
    }
  }, 60_000);
});
