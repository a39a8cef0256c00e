// The `audit` command group. Each subcommand lives in its own module (audit-<name>.ts) and is
// added here with one register call.
import type { Command } from 'commander';
import { registerAuditExport } from './audit-export.js';
import { registerAuditRotateKey } from './audit-rotate-key.js';
import { registerAuditVerify } from './audit-verify.js';

export function registerAuditCommand(program: Command): void {
  const audit = program
    .command('audit')
    .description(
      'Work with the tamper-evident audit trail: per-tenant SHA-256 hash chains anchored by signed checkpoints.',
    );
  registerAuditVerify(audit);
  registerAuditExport(audit);
  registerAuditRotateKey(audit);
}
