// `audit verify <file>`: streams an export through the verifier and reports the first broken
// entry. Exit codes: 0 the chain verifies, 1 it does not (or the file is not an export), 2 the
// command could not run (usage, unreadable file).
import { open } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  findAuditIssueHint,
  readAuditExport,
  type VerifyAuditChainOptions,
  type VerifyAuditChainResult,
  verifyAuditChain,
} from '../../shared/audit/index.js';

const EXIT_VERIFIED = 0;
const EXIT_BROKEN = 1;
const EXIT_USAGE = 2;

interface VerifyFlags {
  json?: boolean;
  partial?: boolean;
  after?: string;
  head?: string;
}

function parseHash(value: string): string {
  if (!/^[0-9a-f]{64}$/.test(value)) {
    throw new InvalidArgumentError('expected a hash of 64 lowercase hex digits.');
  }
  return value;
}

export function registerAuditVerify(audit: Command): void {
  audit
    .command('verify')
    .description('Verify the hash chain of an audit export (a JSON array of entries).')
    .argument('<file>', "the export to verify; '-' reads standard input")
    .option('--json', 'print the result as one JSON object')
    .option('--partial', "the export may start mid-chain: trust the first entry's prevHash")
    .addOption(
      new Option('--after <hash>', 'the first entry must continue from this hash (an earlier head)')
        .argParser(parseHash)
        .conflicts('partial'),
    )
    .addOption(
      new Option(
        '--head <hash>',
        'some entry must have this hash (a head recorded earlier)',
      ).argParser(parseHash),
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 the chain verifies, 1 it does not (the first broken entry is named),\n2 usage or I/O error. Codes and their meaning: docs/audit.md.',
    )
    .exitOverride((error) => {
      // Usage errors exit 2; help and version keep their own code.
      process.exit(error.code.startsWith('commander.help') ? error.exitCode : EXIT_USAGE);
    })
    .action(async (file: string, flags: VerifyFlags) => {
      process.exitCode = await runAuditVerify(file, flags);
    });
}

async function runAuditVerify(file: string, flags: VerifyFlags): Promise<number> {
  let source: AsyncIterable<Uint8Array | string>;
  if (file === '-') {
    source = process.stdin;
  } else {
    try {
      source = (await open(file, 'r')).createReadStream();
    } catch (error) {
      return ioError(file, error);
    }
  }
  const options: VerifyAuditChainOptions = {
    ...(flags.partial ? { partial: true } : {}),
    ...(flags.after !== undefined ? { expectedPrevHash: flags.after } : {}),
    ...(flags.head !== undefined ? { expectedHead: flags.head } : {}),
  };
  let result: VerifyAuditChainResult;
  try {
    result = await verifyAuditChain(readAuditExport(source), options);
  } catch (error) {
    return ioError(file, error);
  }
  process.stdout.write(flags.json ? formatJson(result) : formatText(result));
  return result.ok ? EXIT_VERIFIED : EXIT_BROKEN;
}

function ioError(file: string, error: unknown): number {
  const reason =
    (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'no such file'
      : (error as NodeJS.ErrnoException).code === 'EISDIR'
        ? 'it is a directory'
        : error instanceof Error
          ? error.message
          : String(error);
  process.stderr.write(
    `audit verify: cannot read ${file === '-' ? 'standard input' : `'${file}'`}: ${reason}\n`,
  );
  return EXIT_USAGE;
}

function formatJson(result: VerifyAuditChainResult): string {
  const output = result.ok
    ? result
    : { ...result, hint: findAuditIssueHint(result.firstBroken.code) };
  return `${JSON.stringify(output)}\n`;
}

function formatText(result: VerifyAuditChainResult): string {
  if (result.ok) {
    const what = result.count === 1 ? '1 entry' : `${result.count} entries`;
    const tenant = result.tenantId === null ? 'empty export' : `tenant ${result.tenantId}`;
    return `OK: ${what} verified (${tenant})\nhead: ${result.head ?? 'none'}\n`;
  }
  const issue = result.firstBroken;
  const id = issue.id === null ? 'unknown' : issue.id;
  const before = result.count === 1 ? '1 entry' : `${result.count} entries`;
  return [
    `FAILED at entry ${issue.index} (id ${id}): ${issue.code}`,
    `why:  ${issue.message}`,
    `hint: ${findAuditIssueHint(issue.code)}`,
    `${before} before it verified.`,
    '',
  ].join('\n');
}
