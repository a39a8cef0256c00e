// The gateway_policies columns' defaults (prisma/schema.prisma and its migrations) are the
// fields' defaults: a new tenant's stored policy, read back as the snapshot reads it, is
// GATEWAY_POLICY_DEFAULTS, on every database the gateway supports.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant } from '../../control-plane/services/tenants.js';
import {
  GATEWAY_POLICY_DEFAULTS,
  GATEWAY_POLICY_FIELD_NAMES,
} from '../../shared/gateway-policy/gateway-policy-fields.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.js';

describeEachDatabase('gateway policy defaults in the database', (kind) => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it("a new tenant's policy row holds the fields' defaults", async () => {
    const { id } = await createTenant(t.db, { name: 'fresh' });
    const row = await t.db.prisma.gatewayPolicy.findUniqueOrThrow({ where: { tenantId: id } });
    const stored = Object.fromEntries(
      GATEWAY_POLICY_FIELD_NAMES.map((field) => [field, row[field]]),
    );
    expect(stored).toEqual(GATEWAY_POLICY_DEFAULTS);
  });
});
