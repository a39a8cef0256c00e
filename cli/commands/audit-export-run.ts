// The work of `audit export` (see audit-export.ts for the command and its contract).
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AUDIT_EXPORT_PATH } from '../../control-plane/routes/audit-export.js';
import { ADMIN_KEY_FILE } from '../../runtime/admin-key-file.js';
import { formatAuditExport, inChunksOf } from '../../shared/audit/index.js';
import { formatErrorLine, GatewayError, gatewayError } from '../../shared/errors/index.js';
import type { Database } from '../../storage/engine/database.js';
import { openAuditExport } from '../../storage/tables/audit-export.js';
import { openStoredDatabase } from '../open-stored-database.js';
import { writeFileAtomically } from '../write-file-atomically.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** Output is written in chunks of about this size, not one write per entry. */

/** The options of `audit export`, as commander parses them. */
export interface ExportFlags {
  tenant: string;
  from?: string;
  to?: string;
  output?: string;
  proofs?: string;
  dataDir?: string;
}

export async function runAuditExport(flags: ExportFlags): Promise<number> {
  let from: Date | undefined;
  let to: Date | undefined;
  try {
    from = flags.from === undefined ? undefined : parseInstant('--from', flags.from);
    to = flags.to === undefined ? undefined : parseInstant('--to', flags.to);
    if (from && to && from.getTime() >= to.getTime()) {
      throw gatewayError('CONFIG_INVALID', {
        setting: `--from ${flags.from}`,
        problem: `it is not before --to ${flags.to}`,
      });
    }
  } catch (error) {
    process.stderr.write(`${formatErrorLine(error)}\n`);
    return EXIT_USAGE;
  }
  let db: Database | undefined;
  try {
    db = (await openStoredDatabase(flags.dataDir, 'audit export')).db;
    const trail = await openAuditExport(db, { tenant: flags.tenant, from, to });
    let count = 0;
    let firstId: string | undefined;
    let lastId: string | undefined;
    const counted = async function* () {
      for await (const entry of trail) {
        count++;
        firstId ??= entry.id;
        lastId = entry.id;
        yield entry;
      }
    };
    const text = inChunksOf(formatAuditExport(counted()));
    const where = flags.output === undefined ? 'standard output' : flags.output;
    if (flags.output === undefined) {
      await pipeline(Readable.from(text), process.stdout, { end: false });
    } else {
      await writeFileAtomically(resolve(flags.output), text);
    }
    const slice = trail.filtered ? ' (a slice: verify with --partial)' : '';
    process.stderr.write(
      `audit export: ${count} ${count === 1 ? 'entry' : 'entries'} of tenant ${trail.tenantName} (${trail.tenantId}) from ${db.location} written to ${where}${slice}; chain head seq ${trail.head.seq} hash ${trail.head.hash}\n`,
    );
    if (flags.proofs !== undefined) {
      const { writeAuditProofs } = await import('./audit-proofs-file.js');
      const written = await writeAuditProofs(db, {
        file: resolve(flags.proofs),
        tenantId: trail.tenantId,
        slice: trail.filtered
          ? firstId === undefined || lastId === undefined
            ? null
            : { firstId, lastId }
          : undefined,
        count,
      });
      process.stderr.write(`audit export: ${written}\n`);
    }
    return EXIT_OK;
  } catch (error) {
    process.stderr.write(`${formatErrorLine(error)}\n`);
    if (error instanceof GatewayError && error.code === 'STORAGE_DATA_DIR_IN_USE') {
      process.stderr.write(await describeExportOverHttp(error.details, flags.output, { from, to }));
    }
    return EXIT_FAILED;
  } finally {
    await db?.close().catch(() => {});
  }
}

/**
 * A running gateway holds its embedded database: the same export is its HTTP route. Names the
 * route and a command line that works as printed (the admin key file its first start wrote).
 */
async function describeExportOverHttp(
  details: Readonly<Record<string, unknown>> | undefined,
  output: string | undefined,
  slice: { readonly from: Date | undefined; readonly to: Date | undefined },
): Promise<string> {
  const base = typeof details?.url === 'string' ? details.url : 'http://<gateway host:port>';
  const query = new URLSearchParams();
  if (slice.from) query.set('from', slice.from.toISOString());
  if (slice.to) query.set('to', slice.to.toISOString());
  const url = `${base}${AUDIT_EXPORT_PATH}${query.size > 0 ? `?${query}` : ''}`;
  const keyFile =
    typeof details?.dataDir === 'string' ? join(details.dataDir, ADMIN_KEY_FILE) : undefined;
  const haveKeyFile = keyFile !== undefined && (await exists(keyFile));
  const key = haveKeyFile ? `$(cat ${shellQuote(keyFile)})` : '$AUDITOR_KEY';
  const file = output ?? 'audit.json';
  const verify = `agent-gateway audit verify${query.size > 0 ? ' --partial' : ''} ${shellQuote(file)}`;
  const whose = haveKeyFile
    ? `with the admin key of tenant "default" that its first start wrote (another tenant's chain needs a key of that tenant)`
    : 'with an API key of that tenant holding audit:read in AUDITOR_KEY';
  return [
    `audit export: export from the running gateway instead: GET ${AUDIT_EXPORT_PATH} returns the chain of the API key's tenant (scope audit:read; docs/audit-storage.md), e.g. ${whose}:`,
    `  curl -fsS -H "authorization: Bearer ${key}" ${shellQuote(url)} -o ${shellQuote(file)} && ${verify}`,
    '',
  ].join('\n');
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Quotes a word for a POSIX shell when it holds anything but plainly safe characters. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 date (UTC midnight) or a date-time with a zone; anything else is a usage error. */
function parseInstant(option: string, text: string): Date {
  const value = new Date(text);
  if ((ISO_DATE.test(text) || ISO_DATE_TIME.test(text)) && !Number.isNaN(value.getTime())) {
    return value;
  }
  const reason = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(text)
    ? 'a time needs a zone (Z or ±hh:mm)'
    : 'expected an ISO 8601 date or time';
  throw gatewayError('CONFIG_INVALID', {
    setting: `${option} ${JSON.stringify(text)}`,
    problem: `${reason}, e.g. 2026-07-04 or 2026-07-04T10:00:00Z`,
  });
}
