// The amount a call adds to a budget: the value at the limit's `sumArgument` path in the call's
// arguments. Fail closed: a missing value, anything but a JSON number (numeric strings included),
// a negative number or one beyond the budgets' bound is invalid, and the call is refused
// (BUDGET_ARGUMENT_INVALID) and counted nowhere. Zero is valid and adds nothing.
import { isRecord } from '../json/is-record.js';
import { MAX_LIMIT_SUM } from './usage-limits.js';

export type AmountReading =
  | { readonly ok: true; readonly amount: number }
  | { readonly ok: false; readonly problem: string };

/** Splits `payment.total` once per limit (compile time), not once per call. */
export function compileSumPath(sumArgument: string): readonly string[] {
  return Object.freeze(sumArgument.split('.'));
}

export function readAmount(args: unknown, path: readonly string[]): AmountReading {
  let value: unknown = args;
  for (const segment of path) {
    if (!isRecord(value) || !Object.hasOwn(value, segment)) {
      return { ok: false, problem: 'is missing' };
    }
    value = value[segment];
  }
  if (typeof value !== 'number') {
    return { ok: false, problem: `is ${describe(value)}, not a JSON number` };
  }
  if (!Number.isFinite(value) || value < 0) return { ok: false, problem: 'is negative' };
  if (value > MAX_LIMIT_SUM) return { ok: false, problem: `is above ${MAX_LIMIT_SUM}` };
  return { ok: true, amount: value };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return 'a string';
  return `a ${typeof value}`;
}
