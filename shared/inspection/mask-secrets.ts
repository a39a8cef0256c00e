// A copy of a JSON value with every secret the exfiltration detector's scan finds replaced by
// `[secret: <detail>]` (the operator console shows held calls' arguments masked). Pure module.
//
// Keys are kept as they are (a key is a name, not a value); numbers, booleans and null too (the
// scan finds secrets in strings only). The walk stops at the detectors' inspection limits and
// fails closed: what it did not inspect is replaced by `[not inspected: <limit>]`, since an
// uninspected string cannot be shown as harmless. Recursion is bounded by maxDepth.

import { DEFAULT_INSPECTION_LIMITS, type InspectionLimits } from './limits.js';
import { scanSecretSpans } from './secrets.js';
import type { Finding } from './types.js';

const notInspected = (limit: string): string => `[not inspected: ${limit}]`;

interface Budget {
  nodes: number;
  strings: number;
  bytes: number;
  /** The first limit crossed; everything after it is not inspected. */
  exhausted: string | null;
}

/** Masks the secrets in every string of `value`, within `limits` (default: the detectors'). */
export function maskSecrets(
  value: unknown,
  limits: InspectionLimits = DEFAULT_INSPECTION_LIMITS,
): unknown {
  const budget: Budget = { nodes: 0, strings: 0, bytes: 0, exhausted: null };
  return maskValue(value, undefined, 0, limits, budget);
}

/** `s` with each secret span replaced (overlapping spans merged, the outermost one's detail). */
export function maskSecretsInString(s: string, key?: string): string {
  const spans: { start: number; end: number; finding: Finding }[] = [];
  scanSecretSpans(s, key, (start, end, finding) => spans.push({ start, end, finding }));
  if (spans.length === 0) return s;
  spans.sort((x, y) => x.start - y.start || y.end - x.end);
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.end <= at) continue; // inside a span already masked
    const start = Math.max(span.start, at);
    out += `${s.slice(at, start)}[secret: ${span.finding.detail}]`;
    at = span.end;
  }
  return out + s.slice(at);
}

function maskValue(
  value: unknown,
  key: string | undefined,
  depth: number,
  limits: InspectionLimits,
  budget: Budget,
): unknown {
  if (budget.exhausted !== null) return notInspected(budget.exhausted);
  if (++budget.nodes > limits.maxNodes) return exhaust(budget, 'maxNodes');
  if (typeof value === 'string') {
    if (++budget.strings > limits.maxStrings) return exhaust(budget, 'maxStrings');
    if (value.length > limits.maxStringBytes) return notInspected('maxStringBytes');
    budget.bytes += value.length;
    if (budget.bytes > limits.maxTotalBytes) return exhaust(budget, 'maxTotalBytes');
    return maskSecretsInString(value, key);
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= limits.maxDepth) return notInspected('maxDepth');
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      out[i] = maskValue(value[i], undefined, depth + 1, limits, budget);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return notInspected('not JSON');
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value)) {
    const masked = maskValue(
      (value as Record<string, unknown>)[name],
      name,
      depth + 1,
      limits,
      budget,
    );
    Object.defineProperty(out, name, {
      value: masked,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function exhaust(budget: Budget, limit: string): string {
  budget.exhausted = limit;
  return notInspected(limit);
}
