// The `npl` command group: check policy files, evaluate a tool call, print a content hash.
// Problems are printed one per line as `file:line:col: CODE message (hint: …)`; warnings the same
// way as `warning/<issue>`, and they never change the exit code.
// Exit codes: check/hash 0 ok, 1 invalid; eval 1 on BLOCK, 0 on any other decision,
// 2 when the input itself is unusable (unreadable or invalid policy, bad --args, bad URI).
import { type Command, Option } from 'commander';
// Type only: the commands' code (and the NPL engine) is loaded when one runs, so --help stays fast.
import type { EvalOptions } from './npl-run.js';

export function registerNplCommand(program: Command): void {
  const npl = program
    .command('npl')
    .description('Check, evaluate and hash NPL policy documents (see docs/npl.md).');

  npl
    .command('check')
    .description(
      'Validate policy files (YAML or JSON); print every problem and warning, exit 1 on a problem.',
    )
    .argument('<file...>', 'policy documents to check')
    .action(async (files: string[]) => {
      const { runNplCheck } = await import('./npl-run.js');
      await runNplCheck(files);
    });

  npl
    .command('eval')
    .description('Evaluate one tool call against a policy; exit 1 on BLOCK, 0 otherwise.')
    .addOption(
      new Option('--policy-file <file>', 'policy document (YAML or JSON)').conflicts('policyUri'),
    )
    .addOption(
      new Option(
        '--policy-uri <uri>',
        'pinned bundled policy, e.g. svc://nato-prou-strict-financial@1.0.0',
      ),
    )
    .requiredOption('--tool <name>', 'tool name (tool.name)')
    .option('--args <json>', 'tool arguments as a JSON object (tool.args and args)')
    .option('--agent-role <role>', 'agent role (agentRole)')
    .option('--json', 'print the decision as JSON')
    .action(async (options: EvalOptions) => {
      const { runNplEval } = await import('./npl-run.js');
      await runNplEval(options);
    });

  npl
    .command('hash')
    .description('Print the content hash (SHA-256 of canonical JSON) of a policy document.')
    .argument('<file>', 'policy document (YAML or JSON)')
    .action(async (file: string) => {
      const { runNplHash } = await import('./npl-run.js');
      await runNplHash(file);
    });
}
