import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Node loads graphql's CJS entry for everyone (it has no `exports` map); Vite would pick its ESM
  // `module` entry for our code, a second instance that breaks `instanceof` checks across
  // graphql-ws, yoga and Pothos. One instance, as in production.
  resolve: {
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['tests/bench/**', 'node_modules/**'],
    pool: 'forks',
    // Two files at a time even on a 2-core machine (vitest's default there is one): most tests wait
    // on child processes, sockets and databases, so two overlap well — 530 s instead of 736 s for
    // the whole suite here — and every test waits for events, never for time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
