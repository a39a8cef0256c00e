// Verifies an exported chain in one pass. Each entry is checked in this order, and the first
// problem ends verification: shape (required fields and types), tenant (one chain per export),
// link (prevHash = hash of the entry before it), content (recomputed hash = stored hash), seal
// (id and metadata = the seal in `after`), time (createdAt never goes back). Hash and link rules are those
// of the NPL audit verifier, so both tools accept the same exports; we are stricter in four ways:
// the first entry must start at genesis unless told otherwise (the reference accepts any slice),
// one export holds one tenant, the seal is checked, and timestamps must not decrease (the
// reference documents exports as ordered by createdAt; our writer guarantees it).
//
// Memory is O(1) in the number of entries: the last RECENT_WINDOW hashes are kept to name a
// duplicated entry, and after a broken link the rest of the input is scanned for the missing
// predecessor to tell a reordered export from one with a deleted entry.

import { AUDIT_ISSUE_CODES, type AuditIssueCode } from './codes.js';
import type { AuditExportSyntaxError, ExportPosition } from './export-reader.js';
import { computeEntryHash, GENESIS_HASH, SEAL_PREFIX, sealEntry } from './hash.js';
import type { AuditEntry } from './types.js';

const RECENT_WINDOW = 1024;
const HASH_PATTERN = /^[0-9a-f]{64}$/;
const REQUIRED_FIELDS = [
  'id',
  'tenantId',
  'action',
  'resourceType',
  'resourceId',
  'createdAt',
  'hash',
  'prevHash',
] as const;
const NON_EMPTY_FIELDS = new Set(['id', 'tenantId', 'action', 'resourceType']);
const OPTIONAL_TEXT_FIELDS = [
  'after',
  'before',
  'userId',
  'agentId',
  'ipAddress',
  'userAgent',
] as const;

/** Why a link broke, when the export tells: see AUDIT_CHAIN_BROKEN in docs/audit.md. */
export type ChainBreakCause = 'reordered' | 'deleted' | 'duplicated' | 'restarted';

export interface AuditIssue {
  /** 0-based position of the entry in the export. */
  readonly index: number;
  /** The entry's id, when it has a string id. */
  readonly id: string | null;
  readonly code: AuditIssueCode;
  /** One line: what is wrong with this entry. */
  readonly message: string;
  /** The field concerned, as a path into the entry. */
  readonly path?: readonly (string | number)[];
  /** Where a syntax error is (AUDIT_MALFORMED_JSON). */
  readonly position?: ExportPosition;
  /** For AUDIT_CHAIN_BROKEN. */
  readonly cause?: ChainBreakCause;
  /** The other entry involved (the predecessor found elsewhere), when there is one. */
  readonly relatedIndex?: number;
}

export type VerifyAuditChainResult =
  | {
      readonly ok: true;
      /** Entries verified. */
      readonly count: number;
      /** Hash of the last entry: the next append's prevHash. null when the export is empty. */
      readonly head: string | null;
      readonly tenantId: string | null;
    }
  | {
      readonly ok: false;
      /** Entries verified before the first broken one (= firstBroken.index). */
      readonly count: number;
      readonly issues: readonly AuditIssue[];
      readonly firstBroken: AuditIssue;
    };

export interface VerifyAuditChainOptions {
  /**
   * The export is a slice that may start anywhere in the chain: the first entry's prevHash is
   * taken on trust (what the reference verifier does). Default false: it must be genesis.
   */
  readonly partial?: boolean;
  /** The first entry must continue from this hash (the head of an earlier export). */
  readonly expectedPrevHash?: string;
  /** Some entry must carry this hash (a head recorded earlier): detects a truncated tail. */
  readonly expectedHead?: string;
}

export type AuditEntrySource = Iterable<unknown> | AsyncIterable<unknown>;

type Checked =
  | { readonly entry: AuditEntry }
  | { readonly code: AuditIssueCode; readonly path: (string | number)[]; readonly message: string };

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function checkEntry(value: unknown): Checked {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      code: 'AUDIT_INVALID_FIELD',
      path: [],
      message: `the entry is ${describeType(value)}, not a JSON object`,
    };
  }
  const record = value as Record<string, unknown>;
  for (const field of REQUIRED_FIELDS) {
    if (record[field] === undefined) {
      return { code: 'AUDIT_MISSING_FIELD', path: [field], message: `field '${field}' is missing` };
    }
  }
  for (const field of REQUIRED_FIELDS) {
    const v = record[field];
    if (field === 'prevHash' && v === null) continue;
    if (typeof v !== 'string') {
      const expected = field === 'prevHash' ? 'a string or null' : 'a string';
      return {
        code: 'AUDIT_INVALID_FIELD',
        path: [field],
        message: `field '${field}' is ${describeType(v)}, expected ${expected}`,
      };
    }
    if (NON_EMPTY_FIELDS.has(field) && v === '') {
      return {
        code: 'AUDIT_INVALID_FIELD',
        path: [field],
        message: `field '${field}' is empty`,
      };
    }
    if ((field === 'hash' || field === 'prevHash') && !HASH_PATTERN.test(v)) {
      return {
        code: 'AUDIT_INVALID_FIELD',
        path: [field],
        message: `field '${field}' is not 64 lowercase hex digits`,
      };
    }
  }
  if (Number.isNaN(Date.parse(record.createdAt as string))) {
    return {
      code: 'AUDIT_INVALID_FIELD',
      path: ['createdAt'],
      message: `field 'createdAt' is not an ISO 8601 timestamp: ${JSON.stringify(record.createdAt).slice(0, 40)}`,
    };
  }
  const metadata = record.metadata;
  if (
    metadata !== undefined &&
    metadata !== null &&
    (typeof metadata !== 'object' || Array.isArray(metadata))
  ) {
    return {
      code: 'AUDIT_INVALID_FIELD',
      path: ['metadata'],
      message: `field 'metadata' is ${describeType(metadata)}, expected an object or null`,
    };
  }
  for (const field of OPTIONAL_TEXT_FIELDS) {
    const v = record[field];
    if (v !== undefined && v !== null && typeof v !== 'string') {
      return {
        code: 'AUDIT_INVALID_FIELD',
        path: [field],
        message: `field '${field}' is ${describeType(v)}, expected a string or null`,
      };
    }
  }
  return { entry: record as unknown as AuditEntry };
}

function idOf(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' ? id : null;
}

function hashOf(value: unknown): unknown {
  return value !== null && typeof value === 'object'
    ? (value as Record<string, unknown>).hash
    : undefined;
}

function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
}

function isSyntaxError(error: unknown): error is AuditExportSyntaxError {
  return error instanceof Error && (error as { code?: unknown }).code === 'AUDIT_MALFORMED_JSON';
}

function failure(count: number, issue: AuditIssue): VerifyAuditChainResult {
  return { ok: false, count, issues: [issue], firstBroken: issue };
}

/**
 * Verifies an export: an array, any iterable, or an async iterable such as readAuditExport().
 * Resolves to { ok: true, count, head, tenantId } or { ok: false, count, issues, firstBroken }
 * naming the first broken entry. Rejects only when the source itself fails (I/O).
 */
export async function verifyAuditChain(
  source: AuditEntrySource,
  options: VerifyAuditChainOptions = {},
): Promise<VerifyAuditChainResult> {
  const recentHashes: string[] = new Array(RECENT_WINDOW);
  const recentIds: (string | null)[] = new Array(RECENT_WINDOW);
  let index = 0;
  let tenantId: string | null = null;
  let expected: string | null = null; // prevHash the next entry must carry; null = any
  let headSeen = options.expectedHead === undefined;
  // Set when a link breaks: the rest of the input is scanned for the missing predecessor.
  let broken: {
    index: number;
    id: string | null;
    prevHash: string;
    expected: string | null;
  } | null = null;
  let foundAt = -1;
  let lastTime = Number.NEGATIVE_INFINITY;
  let lastCreatedAt = '';

  if (options.expectedPrevHash !== undefined) expected = options.expectedPrevHash;
  else if (!options.partial) expected = GENESIS_HASH;

  try {
    for await (const value of source as AsyncIterable<unknown>) {
      if (broken !== null) {
        if (hashOf(value) === broken.prevHash) {
          foundAt = index;
          break;
        }
        index++;
        continue;
      }
      const checked = checkEntry(value);
      if (!('entry' in checked)) {
        return failure(index, { index, id: idOf(value), ...checked });
      }
      const entry = checked.entry;
      if (tenantId === null) tenantId = entry.tenantId;
      else if (entry.tenantId !== tenantId) {
        return failure(index, {
          index,
          id: entry.id,
          code: 'AUDIT_TENANT_MIXED',
          path: ['tenantId'],
          message: `tenant ${JSON.stringify(entry.tenantId)} follows entries of tenant ${JSON.stringify(tenantId)}`,
        });
      }
      const prevHash = entry.prevHash ?? GENESIS_HASH;
      if (expected !== null && prevHash !== expected) {
        const earlier = recentHashes.indexOf(prevHash);
        if (prevHash === GENESIS_HASH && index > 0) {
          return failure(index, {
            index,
            id: entry.id,
            code: 'AUDIT_CHAIN_BROKEN',
            path: ['prevHash'],
            cause: 'restarted',
            message: `prevHash is null (the start of a chain), but the entry follows entry ${index - 1}: a second chain starts here`,
          });
        }
        if (earlier !== -1) {
          const at = index - 1 - ((index - 1 - earlier + RECENT_WINDOW) % RECENT_WINDOW);
          return failure(index, {
            index,
            id: entry.id,
            code: 'AUDIT_CHAIN_BROKEN',
            path: ['prevHash'],
            cause: 'duplicated',
            relatedIndex: at,
            message: `prevHash points to entry ${at} (id ${recentIds[earlier]}), which already has a successor (entry ${at + 1}): the entry is duplicated or the chain forks`,
          });
        }
        broken = { index, id: entry.id, prevHash, expected };
        index++;
        continue;
      }
      const hash = computeEntryHash(entry, prevHash);
      if (hash !== entry.hash) {
        return failure(index, {
          index,
          id: entry.id,
          code: 'AUDIT_HASH_MISMATCH',
          path: ['hash'],
          message: `stored hash ${short(entry.hash)} differs from the recomputed ${short(hash)}: a hashed field was edited`,
        });
      }
      if (typeof entry.after === 'string' && entry.after.startsWith(SEAL_PREFIX)) {
        if (sealEntry({ id: entry.id, metadata: entry.metadata ?? null }) !== entry.after) {
          return failure(index, {
            index,
            id: entry.id,
            code: 'AUDIT_SEAL_MISMATCH',
            message: `id or metadata does not match the seal in the hashed 'after' field: one of them was edited`,
          });
        }
      }
      const time = Date.parse(entry.createdAt);
      if (time < lastTime) {
        return failure(index, {
          index,
          id: entry.id,
          code: 'AUDIT_TIMESTAMP_ORDER',
          path: ['createdAt'],
          message: `createdAt ${entry.createdAt} is earlier than the previous entry's ${lastCreatedAt}`,
        });
      }
      lastTime = time;
      lastCreatedAt = entry.createdAt;
      recentHashes[index % RECENT_WINDOW] = entry.hash;
      recentIds[index % RECENT_WINDOW] = entry.id;
      if (!headSeen && entry.hash === options.expectedHead) headSeen = true;
      expected = entry.hash;
      index++;
    }
  } catch (error) {
    if (!isSyntaxError(error)) throw error;
    // A syntax error while scanning for a missing predecessor only ends the scan.
    if (broken === null) {
      return failure(index, {
        index: error.index,
        id: null,
        code: 'AUDIT_MALFORMED_JSON',
        message: error.message,
        ...(error.position ? { position: error.position } : {}),
      });
    }
  }

  if (broken !== null) return failure(broken.index, describeBreak(broken, foundAt));
  if (!headSeen) {
    return failure(index, {
      index,
      id: null,
      code: 'AUDIT_HEAD_MISSING',
      message:
        index === 0
          ? `the export is empty, so it lacks the expected head ${short(options.expectedHead!)}`
          : `no entry has the expected head hash ${short(options.expectedHead!)}: the export ends at entry ${index - 1}, entries after it are missing`,
    });
  }
  return { ok: true, count: index, head: index === 0 ? null : expected, tenantId };
}

function describeBreak(
  broken: { index: number; id: string | null; prevHash: string; expected: string | null },
  foundAt: number,
): AuditIssue {
  const base = {
    index: broken.index,
    id: broken.id,
    code: 'AUDIT_CHAIN_BROKEN' as const,
    path: ['prevHash'],
  };
  if (foundAt !== -1) {
    return {
      ...base,
      cause: 'reordered',
      relatedIndex: foundAt,
      message: `prevHash points to entry ${foundAt}, which comes later in the export: entries are out of order`,
    };
  }
  let message: string;
  if (broken.index > 0) {
    message = `prevHash ${short(broken.prevHash)} matches no entry of the export: an entry between entries ${broken.index - 1} and ${broken.index} was deleted, or entry ${broken.index - 1} was rewritten`;
  } else if (broken.expected === GENESIS_HASH) {
    message = `the export does not start at the beginning of the chain: prevHash ${short(broken.prevHash)} matches no entry, so the entries before it were deleted (if the export is a slice, verify it as one)`;
  } else {
    message = `the first entry does not continue from the expected hash ${short(broken.expected ?? '')}: entries between them were deleted, or the export belongs elsewhere`;
  }
  return { ...base, cause: 'deleted', message };
}

/** The hint of an issue code, for one-line reports. */
export function findAuditIssueHint(code: AuditIssueCode): string {
  return AUDIT_ISSUE_CODES[code].hint;
}
