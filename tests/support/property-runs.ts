// How many runs a fast-check property gets. On the build runtime (Node 20, the whole suite) every
// property runs as many times as its test says. The nested runs on the other LTS lines
// (tests/runtime/node-lines.test.ts) set PROPERTY_RUNS_SHARE_VARIABLE to a share of that: they run
// the same code, so what they check is the runtime (V8's regular expressions and strings, OpenSSL,
// Node's APIs) under every property and example, not the depth of the input space the Node 20 run
// has already searched. At a tenth, the three lines' unit runs cost a third of what they did
// (docs/PERFORMANCE.md, "Property runs on the other Node lines").
//
// Loaded as a setup file of the unit project (vitest.config.ts), it also scales fast-check's
// default of 100 runs for the properties that do not give their own number.
import fc from 'fast-check';

/** A share of each property's runs, between 0 and 1: set by the Node-line runs only. */
export const PROPERTY_RUNS_SHARE_VARIABLE = 'AGENT_GATEWAY_PROPERTY_RUNS_SHARE';

/** No property runs fewer times than this (nor more than its own number). */
const MIN_RUNS = 20;

/** fast-check's own default number of runs. */
const DEFAULT_RUNS = 100;

function runsShare(): number {
  const value = process.env[PROPERTY_RUNS_SHARE_VARIABLE];
  if (value === undefined || value === '') return 1;
  const share = Number(value);
  if (!(share > 0 && share <= 1)) {
    throw new Error(`${PROPERTY_RUNS_SHARE_VARIABLE} must be a number in (0, 1], not '${value}'`);
  }
  return share;
}

const share = runsShare();

/** The runs a property that asks for `runs` gets in this test process. */
export function propertyRuns(runs: number): number {
  if (share === 1) return runs;
  return Math.min(runs, Math.max(MIN_RUNS, Math.ceil(runs * share)));
}

if (share !== 1) fc.configureGlobal({ numRuns: propertyRuns(DEFAULT_RUNS) });
