import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './tests/support/sequencer.js';

/**
 * The unit project: pure code (shared/, the compiled store, inspection detectors, the pipeline,
 * parsers and small classes), no database, no socket, no process, no browser; guarded by
 * tests/support/unit-guard.ts. `npm run test:unit` runs only these.
 */
export const UNIT_TESTS = [
  // Every test of shared/ but the audit export's scale test (100 MB streamed: integration).
  'tests/shared/!(audit)/**/*.test.ts',
  'tests/shared/audit/!(large-export).test.ts',
  'tests/data-plane/inspection/**/*.test.ts',
  'tests/data-plane/store/**/*.test.ts',
  'tests/data-plane/governance/pipeline.test.ts',
  'tests/data-plane/agentiam/replay-guard.test.ts',
  'tests/data-plane/metrics/decision-tally.test.ts',
  'tests/data-plane/oauth/auth-failure-limiter.test.ts',
  'tests/data-plane/remote/kill-guard.test.ts',
  'tests/data-plane/remote/persistence.test.ts',
  'tests/data-plane/inspect/body-schema.test.ts',
  'tests/data-plane/json-bounds.test.ts',
  'tests/data-plane/compliance-work.test.ts',
  'tests/data-plane/compliance.fuzz.test.ts',
  'tests/http-edge/access-log.test.ts',
  'tests/http-edge/health.test.ts',
  'tests/control-plane/config-push-hub.test.ts',
  'tests/control-plane/graphql/batch-loader.test.ts',
  'tests/control-plane/graphql/schema.test.ts',
  'tests/control-plane/graphql/socket-keys.test.ts',
  'tests/runtime/config.test.ts',
  'tests/cli/npm-parent-watch.test.ts',
  'tests/runtime/config-docs.test.ts',
  'tests/storage/engine/batched-writer.test.ts',
  'tests/tool-pinning/tool-pins.test.ts',
  'tests/client/core-config.test.ts',
  'tests/client/core-proof.test.ts',
  'tests/client/delegation-signing.test.ts',
  'tests/client/reason-codes.test.ts',
];

/** The console project: the built console in Debian's Chromium (playwright-core). */
export const CONSOLE_TESTS = ['tests/console/**/*.test.ts'];

export default defineConfig({
  // Node loads graphql's CJS entry for everyone (it has no `exports` map); Vite would pick its ESM
  // `module` entry for our code, a second instance that breaks `instanceof` checks across
  // graphql-ws, yoga and Pothos. One instance, as in production.
  resolve: {
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    exclude: ['tests/bench/**', 'node_modules/**'],
    // One migrated PGlite template for the run, loaded by every in-memory test database.
    globalSetup: ['tests/support/global-setup.ts'],
    pool: 'forks',
    // Longest files first, project by project (tests/support/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // Three files at a time on a 2-core machine (vitest's default there is one): most of an
    // integration test's time is spent waiting for child processes, sockets, databases and
    // browsers, so a third file fills the cores the other two leave idle (measured: see
    // tests/support/sequencer.ts), and every test waits for events, never for time. One number
    // for every project: vitest runs projects of one `sequence.groupOrder` in one pool only when
    // their maxWorkers agree, and one pool is what keeps the console's browsers from being the
    // run's tail (sequencer.ts).
    maxWorkers: 3,
    // Failure bounds only, for a machine busy with other work: on 2 cores shared with other
    // suites, a beforeAll starting a gateway took over 60 s.
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT_TESTS,
          setupFiles: ['tests/support/unit-guard.ts', 'tests/support/property-runs.ts'],
          // Pure modules hold no state between files: imported once per worker, not once per file.
          isolate: false,
          // Pure code: a test that takes seconds here is a bug, not a slow machine.
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // Files share their worker's module cache (each still builds its own gateways,
          // databases and processes): importing the gateway once per worker instead of once per
          // file took the project from ~8 to ~5.3 minutes here. So a file must leave no global
          // state behind: no vi.mock, no process.env write it does not undo, no server left open
          // (but the idle PGlite servers tests/support/databases.ts hands from test to test).
          isolate: false,
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/bench/**', 'node_modules/**', ...UNIT_TESTS, ...CONSOLE_TESTS],
        },
      },
      {
        extends: true,
        // One browser and gateway per file, as in integration; the module cache is shared.
        test: {
          name: 'console',
          include: CONSOLE_TESTS,
          isolate: false,
        },
      },
    ],
  },
});
