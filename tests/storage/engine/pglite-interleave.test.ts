// The embedded database serves many pool connections on PGlite's one session. Plain reads running
// beside interactive transactions must each get their own answer: before the session queue
// (storage/engine/pglite-session-queue.ts) one connection's Bind could run against another's Parse,
// failing with 26000 or returning another query's rows.
import { expect, it } from 'vitest';
import { createTenant } from '../../../control-plane/services/tenants.js';
import { createTestDatabase } from '../../support/databases.js';

it('answers every query of concurrent connections with its own rows (PGlite)', async () => {
  const t = await createTestDatabase('pglite');
  try {
    const tenant = await createTenant(t.db, { name: 'interleave' });
    const before = await t.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } });
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 6 }, async (_, n) => {
          try {
            if (n % 2 === 0) {
              const found = await t.db.prisma.tenant.findFirst({ where: { id: tenant.id } });
              if (found?.id !== tenant.id) failures.push(`round ${round}/${n}: wrong rows`);
            } else {
              await t.db.prisma.$transaction(async (tx) => {
                await tx.tenant.update({
                  where: { id: tenant.id },
                  data: { configVersion: { increment: 1 } },
                });
              });
            }
          } catch (error) {
            failures.push(`round ${round}/${n}: ${(error as Error).message.split('\n').pop()}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
    const after = await t.db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } });
    expect(after.configVersion - before.configVersion).toBe(20 * 3);
  } finally {
    await t.dispose();
  }
}, 120_000);
