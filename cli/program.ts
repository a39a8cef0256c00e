// Assembles the `agent-gateway` command. Each command group lives in its own module under
// cli/commands/ and exports a `register…Command(program)` function; this file only wires them.
import { Command } from 'commander';
import { registerAdminKeyCommand } from './commands/admin-key.js';
import { registerAgentiamCommand } from './commands/agentiam.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerControlPlaneCommand } from './commands/control-plane.js';
import { registerDataPlaneCommand } from './commands/data-plane.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerNplCommand } from './commands/npl.js';
import { registerStartCommand } from './commands/start.js';
import { registerTokenKeyCommand } from './commands/token-key.js';

export function buildProgram(): Command {
  const program = new Command('agent-gateway')
    .description('Governance gateway between AI agents and the MCP servers they call.')
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions();
  registerStartCommand(program);
  registerMigrateCommand(program);
  registerAuditCommand(program);
  registerAdminKeyCommand(program);
  registerNplCommand(program);
  registerAgentiamCommand(program);
  registerControlPlaneCommand(program);
  registerDataPlaneCommand(program);
  registerTokenKeyCommand(program);
  return program;
}
