// How V8 optimizes the embedded database's WebAssembly. V8 re-compiles a WebAssembly function with
// its optimizing compiler once the function has run a budget of instructions (about 1.8 MB by
// default). Opening a database runs much of PostgreSQL exactly once (recovery, the catalog, the
// migrations), so with the default budget a start spent more CPU optimizing code it would not run
// again than running it. Measured through the CLI on this 2-core machine (docs/PERFORMANCE.md,
// "Embedded database start"): a restart took 7.4–8.1 CPU-s and 5.1–5.7 s to ready, and 4.6–5.7
// CPU-s and 3.7–4.5 s with the budget raised 100 times; a first start 11.4 → 7.4–8.7 CPU-s.
// Code that stays hot under load still reaches the optimizing compiler, and sustained inserts and
// queries ran no slower. V8 reads the budget when it compiles a module, for every thread of the
// process, and offers no other way to set it than its flags: so it is set once, before PGlite's
// module is compiled, by whichever opens a database first.
import { setFlagsFromString } from 'node:v8';

/** 100 times V8's default: what a start runs once stays on the baseline compiler's code. */
const WASM_TIERING_BUDGET = 180_000_000;

let raised = false;

/** Sets V8's WebAssembly tiering budget for this process (once; later calls do nothing). */
export function raiseWasmTieringBudget(): void {
  if (raised) return;
  raised = true;
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}
