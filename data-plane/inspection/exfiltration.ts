// The data-exfiltration detector (after the destructive check, before NPL; 403
// MCP_DATA_EXFILTRATION_SUSPECTED). Pure module: no I/O, no framework imports.
//
// Three heuristics, each switchable per tenant; with all three off the compiled detector is a
// constant `null`. The arguments are walked once within the inspection limits; per leaf, in this
// order: secrets, destinations, bulk-export. Past the limits the answer is `inspection-limit`
// (fail closed). Rules and reasons: docs/inspection-detectors.md.

import { findSecret } from '../../shared/inspection/secrets.js';
import { DomainAllowList, findDisallowedDestination } from './destinations.js';
import {
  ArgumentWalker,
  INSPECTION_FAILED,
  type InspectionLimits,
  type LeafVisitor,
  LIMIT_CANDIDATES,
  resolveInspectionLimits,
} from './limits.js';
import { SQL_BULK_HINT, SqlAnalyzer } from './sql.js';
import type { CallDetector, DetectorSignal, Finding } from './types.js';
import { splitWords } from './words.js';

export interface ExfiltrationDetectorOptions {
  /** Private keys, cloud keys, tokens, JWTs, high-entropy strings in arguments. */
  readonly detectSecrets: boolean;
  /** Fires on a request for more items than this; null switches the heuristic off. */
  readonly bulkExportLimit: number | null;
  /** Fires on a URL or email address whose host is not in allowedDomains. */
  readonly checkDestinations: boolean;
  /** A domain allows itself and its subdomains; empty: every destination fires. */
  readonly allowedDomains: readonly string[];
  readonly limits?: Partial<InspectionLimits>;
}

/**
 * Argument names that ask for a number of items, compared without case, `_`, `-` or `$`
 * (so `page_size`, `pageSize`, `$top` all count).
 */
export const BULK_LIMIT_ARGUMENTS: readonly string[] = Object.freeze([
  'limit',
  'pagesize',
  'perpage',
  'count',
  'maxresults',
  'maxrows',
  'maxitems',
  'maxrecords',
  'size',
  'top',
  'first',
  'last',
  'rows',
  'batchsize',
  'numresults',
  'take',
]);
/** Tool-name words of export tools, which fire with an `all: true`-style argument. */
const EXPORT_WORDS = new Set(['export', 'dump', 'backup', 'exfiltrate', 'extract']);
const ALL_KEYS = new Set(['all', 'everything', 'full', 'entire', 'includeall', 'exportall']);
const MAX_CACHED_NAMES = 4096;

const NULL_DETECTOR: CallDetector = () => null;

function normalizeKey(key: string): string {
  return key.length > 32 ? '' : key.toLowerCase().replace(/[_\-$]/g, '');
}

function numericString(value: string): number | null {
  if (value.length === 0 || value.length > 20) return null;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (i === 0 && c === 45))) return null;
  }
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

export function compileExfiltrationDetector(options: ExfiltrationDetectorOptions): CallDetector {
  const detectSecrets = options.detectSecrets === true;
  const limit = options.bulkExportLimit;
  if (limit !== null && !(typeof limit === 'number' && Number.isFinite(limit) && limit >= 0)) {
    throw new RangeError('bulkExportLimit must be a non-negative number or null');
  }
  const checkDestinations = options.checkDestinations === true;
  if (!detectSecrets && limit === null && !checkDestinations) return NULL_DETECTOR;

  const allow = new DomainAllowList(checkDestinations ? options.allowedDomains : []);
  const walker = new ArgumentWalker(resolveInspectionLimits(options.limits));
  const sql = new SqlAnalyzer();
  const limitKeys = new Set(BULK_LIMIT_ARGUMENTS);
  const keyCache = new Map<string, boolean>();
  const exportTools = new Map<string, boolean>();
  const take = () => walker.takeCandidate();
  let exportTool = false;

  const isLimitKey = (key: string | undefined): boolean => {
    if (key === undefined) return false;
    let hit = keyCache.get(key);
    if (hit === undefined) {
      hit = limitKeys.has(normalizeKey(key));
      if (keyCache.size >= MAX_CACHED_NAMES) keyCache.clear();
      keyCache.set(key, hit);
    }
    return hit;
  };

  const overLimit = (n: number, key: string): Finding | null => {
    if (limit === null) return null;
    if (n < 0) return { kind: 'bulk-export', detail: `${key} ${n} (unlimited)` };
    return n > limit ? { kind: 'bulk-export', detail: `${key} ${n} > ${limit}` } : null;
  };

  const visitor: LeafVisitor = {
    visitString(value, w) {
      const key = w.key();
      if (detectSecrets) {
        const found = findSecret(value, key);
        if (found !== null) return found;
      }
      if (checkDestinations && (value.includes('://') || value.includes('@'))) {
        const found = findDisallowedDestination(value, allow, take, LIMIT_CANDIDATES);
        if (found !== null) return found;
      }
      if (limit !== null) {
        if (isLimitKey(key)) {
          const n = numericString(value);
          if (n !== null) {
            const found = overLimit(n, key!);
            if (found !== null) return found;
          }
        }
        if (value.length >= 10 && SQL_BULK_HINT.test(value)) {
          const found = sql.bulk(value, limit);
          if (found !== null) return found;
        }
      }
      return null;
    },
    visitNumber(value, w) {
      if (limit === null) return null;
      const key = w.key();
      return isLimitKey(key) ? overLimit(value, key!) : null;
    },
    visitBoolean(value, w) {
      if (!exportTool || !value) return null;
      const key = w.key();
      return key !== undefined && ALL_KEYS.has(normalizeKey(key))
        ? { kind: 'bulk-export', detail: `export tool with ${key}: true` }
        : null;
    },
  };

  const isExportTool = (name: string | undefined): boolean => {
    if (limit === null || typeof name !== 'string' || name.length === 0) return false;
    let hit = exportTools.get(name);
    if (hit === undefined) {
      hit = splitWords(name).some((word) => EXPORT_WORDS.has(word));
      if (exportTools.size >= MAX_CACHED_NAMES) exportTools.clear();
      exportTools.set(name, hit);
    }
    return hit;
  };

  return (call): DetectorSignal | null => {
    try {
      exportTool = isExportTool(call.toolName);
      const found = walker.walk(call.args, visitor);
      if (found === null) return null;
      return { kind: found.kind, detail: found.detail, path: walker.lastPath() };
    } catch {
      return { kind: INSPECTION_FAILED.kind, detail: INSPECTION_FAILED.detail };
    }
  };
}
