// The work of `admin-key reset` (see admin-key.ts for the command and its contract).
import { resetAdminKey } from '../../control-plane/services/bootstrap.js';
import { formatErrorLine } from '../../shared/errors/index.js';
import type { EventBus } from '../../shared/events/index.js';
import { publishAuditEntries } from '../../shared/events/index.js';
import { openEventBus } from '../../storage/events/index.js';
import { createAuditWriter } from '../../storage/tables/audit-writer.js';
import { openStoredDatabase, type StoredDatabase } from '../open-stored-database.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;

/** The options of `admin-key reset`, as commander parses them. */
export interface AdminKeyResetFlags {
  tenant: string;
  dataDir?: string;
}

export async function runAdminKeyReset(flags: AdminKeyResetFlags): Promise<number> {
  let stored: StoredDatabase | undefined;
  let events: EventBus | undefined;
  try {
    stored = await openStoredDatabase(flags.dataDir, 'admin-key reset');
    // On PostgreSQL the entry is announced like a gateway's: running auditTrail subscribers see it.
    events = stored.postgres ? await openEventBus(stored.postgres) : undefined;
    const audit = createAuditWriter(
      stored.db,
      events ? { onCommitted: publishAuditEntries(events) } : {},
    );
    try {
      const reset = await resetAdminKey(stored.db, audit, flags.tenant);
      process.stdout.write(`${reset.adminKey.key}\n`);
      process.stderr.write(
        `admin-key reset: minted API key ${reset.adminKey.prefix} (id ${reset.adminKey.id}) with every scope for tenant ${reset.tenantName} (${reset.tenantId}) in ${stored.db.location}; audited as api_key.created. Keep it secret: it is shown only this once. Revoke it (revokeApiKey) once you have made the admin keys you need.\n`,
      );
      return EXIT_OK;
    } finally {
      await audit.close();
    }
  } catch (error) {
    process.stderr.write(`${formatErrorLine(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await events?.close().catch(() => {});
    await stored?.db.close().catch(() => {});
  }
}
