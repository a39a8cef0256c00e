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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
