// Bounding the CPU a batch may cost, before anything is evaluated and without a clock. NPL
// evaluation is linear, but in two products: the condition text walked for every call, and the
// bytes of a call that string operations (contains, comparisons, `in` on lists, and above all
// `matches`) may scan. A `matches` step costs up to one step per NFA state of its pattern per
// input character, so its weight grows with the pattern's length and counted repetitions.
//
//   work(item, call) = ⌈C / 16⌉ + bytes(call) × (⌈C / 64⌉ + Σ weight(pattern))
//   weight(pattern)  = min(8192, 2 × length × Π counts of {n} / {n,m} / {n,} in it)
//
// C is the total length of the policy's conditions and bytes(call) the length of the call's JSON.
// A `matches` whose pattern cannot be read off the text is charged the maximum weight. One unit
// is at most ~20 ns on the reference machine (docs/compliance-batch.md, "Limits").
import type { NplPolicy } from '../../../shared/npl/index.js';

const MAX_PATTERN_WEIGHT = 8192;
const MATCHES_CALL = /matches\s*\(\s*(?:'([^']*)'|"([^"]*)")/g;
const MATCHES_WORD = /matches/g;
const COUNTED_REPEAT = /\{(\d+)(?:(,)(\d*))?\}/g;

export interface PolicyCost {
  /** Units charged for every call, whatever its size. */
  readonly perCall: number;
  /** Units charged per character of a call's JSON. */
  readonly perByte: number;
}

export function patternWeight(pattern: string): number {
  let weight = 2 * Math.max(1, pattern.length);
  for (const match of pattern.matchAll(COUNTED_REPEAT)) {
    const low = Number(match[1]);
    const high = match[2] === undefined ? low : match[3] === '' ? low + 1 : Number(match[3]);
    weight *= Math.max(1, low, high);
    if (weight >= MAX_PATTERN_WEIGHT) return MAX_PATTERN_WEIGHT;
  }
  return Math.min(weight, MAX_PATTERN_WEIGHT);
}

function conditionRegexWeight(condition: string): number {
  let weight = 0;
  let calls = 0;
  for (const match of condition.matchAll(MATCHES_CALL)) {
    weight += patternWeight(match[1] ?? match[2] ?? '');
    calls++;
  }
  const words = condition.match(MATCHES_WORD)?.length ?? 0;
  return weight + Math.max(0, words - calls) * MAX_PATTERN_WEIGHT;
}

export function estimatePolicyCost(policy: NplPolicy): PolicyCost {
  let chars = 0;
  let regex = 0;
  for (const rule of policy.rules) {
    chars += rule.condition.length;
    regex += conditionRegexWeight(rule.condition);
  }
  return { perCall: Math.ceil(chars / 16), perByte: Math.ceil(chars / 64) + regex };
}

export function estimateCallWork(cost: PolicyCost, callBytes: number): number {
  return cost.perCall + callBytes * cost.perByte;
}
