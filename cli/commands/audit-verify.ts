// `audit verify <file>`: streams an export through the verifier and reports the first broken
// entry. With --checkpoint (and --proofs), it also anchors the export to signed checkpoints
// (shared/audit/verify-anchors.ts): each checkpoint's signature by a trusted verifier key (--key,
// else the audit keys of the gateway whose database it is pointed at), the root of the export's
// first n entries against each checkpoint of size n, and the proofs file's inclusion and
// consistency proofs. Exit codes: 0 everything verifies, 1 something does not (or the file is not
// an export), 2 the command could not run (usage, unreadable file, no key to trust).
import { open, readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  type AnchorResult,
  type AuditProofs,
  type CheckpointSource,
  ExportTreeTap,
  findAuditIssueHint,
  parseAuditProofs,
  readAuditExport,
  type VerifyAuditChainOptions,
  type VerifyAuditChainResult,
  verifyAnchors,
  verifyAuditChain,
  wantedByAnchors,
} from '../../shared/audit/index.js';
import { formatErrorLine } from '../../shared/errors/index.js';
import {
  type NoteVerifierKey,
  parseVerifierKey,
  parseWitnessKey,
  type WitnessKey,
} from '../../shared/tlog/index.js';

const EXIT_VERIFIED = 0;
const EXIT_BROKEN = 1;
const EXIT_USAGE = 2;

interface VerifyFlags {
  json?: boolean;
  partial?: boolean;
  after?: string;
  head?: string;
  checkpoint: string[];
  key: NoteVerifierKey[];
  witnessKey: WitnessKey[];
  proofs?: string;
  dataDir?: string;
}

/** Checkpoint fetches give up after this long. */
const FETCH_TIMEOUT_MS = 10_000;
/** A signed checkpoint is a few hundred bytes; a witness-cosigned one a few more. */
const MAX_NOTE_BYTES = 64 * 1024;
/** A proofs file holds a few proofs of a few dozen hashes each. */
const MAX_PROOFS_BYTES = 16 * 1024 * 1024;

function collect<T>(parse: (value: string) => T) {
  return (value: string, previous: T[] = []) => [...previous, parse(value)];
}

function parseWitnessKeyOption(value: string): WitnessKey {
  const key = parseWitnessKey(value);
  if (typeof key === 'string') throw new InvalidArgumentError(`${key}.`);
  return key;
}

function parseKeyOption(value: string): NoteVerifierKey {
  const key = parseVerifierKey(value);
  if (typeof key === 'string') throw new InvalidArgumentError(`${key}.`);
  return key;
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
    .option(
      '--checkpoint <file|url>',
      'a signed checkpoint the export must agree with (repeatable): a file, or a URL such as <gateway>/api/v1/audit/checkpoint (sent with the API key in AGENT_GATEWAY_API_KEY when set)',
      collect(String),
      [],
    )
    .option(
      '--key <verifier key>',
      'a trusted audit verifier key, <name>+<id>+<key> (repeatable; default: the audit keys stored in the database of --data-dir or DATABASE_URL)',
      collect(parseKeyOption),
      [],
    )
    .option(
      '--witness-key <verifier key>',
      "a witness's cosignature/v1 key (repeatable): the witnesses that cosigned each checkpoint are reported",
      collect(parseWitnessKeyOption),
      [],
    )
    .option(
      '--proofs <file>',
      'the proofs file `audit export --proofs` wrote beside the export (checkpoints, inclusion and consistency proofs)',
    )
    .option(
      '--data-dir <dir>',
      'where to read the audit keys without --key (default: DATABASE_URL, else AGENT_GATEWAY_DATA_DIR)',
    )
    .addHelpText(
      'after',
      [
        '',
        "Anchoring: each --checkpoint must be signed by a trusted key and name the export's tenant;",
        "the root of the export's first n entries must equal the root of each checkpoint of size n.",
        'A checkpoint beyond the export needs a consistency proof from the proofs file, or it fails',
        '(not reached); for a --partial slice it is reported, and an inclusion proof anchors it.',
        '',
        'Examples:',
        '  agent-gateway audit verify audit.json --checkpoint kept-checkpoint.txt --key "$AUDIT_KEY"',
        '  agent-gateway audit export --tenant acme --output a.json --proofs a.proofs.json',
        '  agent-gateway audit verify a.json --proofs a.proofs.json --checkpoint kept.txt',
        '',
        'Exit codes: 0 everything verifies, 1 something does not (the first broken entry,',
        'checkpoint or proof is named), 2 usage or I/O error. Codes: docs/audit.md.',
      ].join('\n'),
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
  let anchors: AnchorInputs | undefined;
  try {
    anchors = await readAnchorInputs(flags);
  } catch (error) {
    process.stderr.write(`audit verify: ${(error as Error).message}\n`);
    return EXIT_USAGE;
  }
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
  const wanted = anchors
    ? wantedByAnchors(anchors.notes(), anchors.proofs)
    : { sizes: [], ids: [] };
  const tap = new ExportTreeTap(wanted.sizes, wanted.ids);
  let result: VerifyAuditChainResult;
  try {
    result = await verifyAuditChain(tap.tap(readAuditExport(source)), options);
  } catch (error) {
    return ioError(file, error);
  }
  const anchored =
    anchors && result.ok
      ? verifyAnchors({
          checkpoints: anchors.checkpoints,
          keys: anchors.keys,
          witnessKeys: flags.witnessKey,
          proofs: anchors.proofs,
          tap,
          tenantId: result.tenantId,
          partial: flags.partial === true || flags.after !== undefined,
        })
      : undefined;
  process.stdout.write(
    flags.json ? formatJson(result, anchored) : formatText(result) + formatAnchors(anchored),
  );
  return result.ok && (anchored?.ok ?? true) ? EXIT_VERIFIED : EXIT_BROKEN;
}

interface AnchorInputs {
  readonly checkpoints: readonly CheckpointSource[];
  readonly keys: readonly NoteVerifierKey[];
  readonly proofs: AuditProofs | undefined;
  notes(): string[];
}

/** The checkpoints, keys and proofs file the flags name; undefined when none is asked for. */
async function readAnchorInputs(flags: VerifyFlags): Promise<AnchorInputs | undefined> {
  if (flags.checkpoint.length === 0 && flags.proofs === undefined) return undefined;
  const checkpoints: CheckpointSource[] = [];
  for (const where of flags.checkpoint) {
    checkpoints.push({ source: where, note: await readCheckpoint(where) });
  }
  let proofs: AuditProofs | undefined;
  if (flags.proofs !== undefined) {
    const text = await readBounded(flags.proofs, MAX_PROOFS_BYTES);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`${flags.proofs} is not JSON: ${(error as Error).message}`);
    }
    const parsed = parseAuditProofs(json);
    if (typeof parsed === 'string')
      throw new Error(`${flags.proofs} is not a proofs file: ${parsed}`);
    proofs = parsed;
  }
  const keys = flags.key.length > 0 ? flags.key : await storedAuditKeys(flags.dataDir);
  return {
    checkpoints,
    keys,
    proofs,
    notes: () => checkpoints.map((checkpoint) => checkpoint.note),
  };
}

async function readCheckpoint(where: string): Promise<string> {
  if (!/^https?:\/\//.test(where)) return readBounded(where, MAX_NOTE_BYTES);
  const apiKey = process.env.AGENT_GATEWAY_API_KEY;
  let response: Response;
  try {
    response = await fetch(where, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      redirect: 'error',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`cannot fetch the checkpoint ${where}: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    const hint =
      response.status === 401 || response.status === 403
        ? ' (set AGENT_GATEWAY_API_KEY to an API key with audit:read)'
        : '';
    throw new Error(
      `the checkpoint ${where} answered ${response.status}${hint}: ${text.slice(0, 200)}`,
    );
  }
  if (text.length > MAX_NOTE_BYTES)
    throw new Error(`the checkpoint ${where} is larger than 64 KiB`);
  return text;
}

async function readBounded(file: string, maxBytes: number): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot read '${file}': ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  if (Buffer.byteLength(text) > maxBytes)
    throw new Error(`'${file}' is larger than ${maxBytes} bytes`);
  return text;
}

/** The audit verifier keys stored in the gateway's database (active and retired). */
async function storedAuditKeys(dataDir: string | undefined): Promise<NoteVerifierKey[]> {
  const { openStoredDatabase } = await import('../open-stored-database.js');
  const { listAuditSigningKeys } = await import('../../control-plane/audit/signing-key.js');
  let stored: Awaited<ReturnType<typeof openStoredDatabase>>;
  try {
    stored = await openStoredDatabase(dataDir, 'audit verify');
  } catch (error) {
    throw new Error(
      `no --key given, and the gateway's audit keys cannot be read: ${formatErrorLine(error)} (pass --key <verifier key>, as GET /api/v1/audit/checkpoint/key lists them)`,
    );
  }
  try {
    const keys = await listAuditSigningKeys(stored.db);
    if (keys.length === 0) {
      throw new Error(
        `no --key given, and ${stored.db.location} holds no audit key yet (pass --key <verifier key>)`,
      );
    }
    return keys.map((key) => parseKeyOption(key.verifierKey));
  } finally {
    await stored.db.close().catch(() => {});
  }
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

function formatJson(result: VerifyAuditChainResult, anchors: AnchorResult | undefined): string {
  const output = result.ok
    ? result
    : { ...result, hint: findAuditIssueHint(result.firstBroken.code) };
  if (anchors === undefined) return `${JSON.stringify(output)}\n`;
  const first = anchors.findings[0];
  return `${JSON.stringify({
    ...output,
    ok: result.ok && anchors.ok,
    anchors: first ? { ...anchors, hint: findAuditIssueHint(first.code) } : anchors,
  })}\n`;
}

const STATUS_TEXT = {
  matched: 'matched: the export holds exactly its history',
  proven: 'proven by the proofs file',
  'not-reached': 'not reached: beyond the slice, and no proof reaches it',
  failed: 'FAILED',
} as const;

function formatAnchors(anchors: AnchorResult | undefined): string {
  if (anchors === undefined) return '';
  const lines = anchors.checkpoints.map((checkpoint) => {
    const size = checkpoint.treeSize === null ? '' : ` (tree size ${checkpoint.treeSize})`;
    const by =
      (checkpoint.signedBy === null ? '' : `, signed by ${checkpoint.signedBy}`) +
      (checkpoint.cosignedBy.length === 0
        ? ''
        : `, cosigned by ${checkpoint.cosignedBy.join(', ')}`);
    return `checkpoint ${checkpoint.source}${size}: ${STATUS_TEXT[checkpoint.status]}${by}`;
  });
  const first = anchors.findings[0];
  if (first === undefined) {
    lines.push(
      `anchored: the first ${anchors.anchoredEntries} ${anchors.anchoredEntries === 1 ? 'entry is' : 'entries are'} under a signed checkpoint`,
    );
  } else {
    const where = first.proof ?? first.checkpoint ?? 'the checkpoints';
    lines.push(
      `FAILED at ${where}: ${first.code}`,
      `why:  ${first.message}`,
      `hint: ${findAuditIssueHint(first.code)}`,
    );
    if (anchors.findings.length > 1)
      lines.push(`${anchors.findings.length - 1} more finding(s): see --json.`);
  }
  return `${lines.join('\n')}\n`;
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
