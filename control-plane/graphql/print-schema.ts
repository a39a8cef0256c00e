// Prints the GraphQL schema as SDL: `tsx control-plane/graphql/print-schema.ts` to stdout,
// `--write` to schema/schema.graphql (committed; tests/control-plane/graphql/schema.test.ts
// fails when the committed file differs from what the code builds).
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { schema } from './schema/index.js';

// The graphql instance the schema was built with: Node loads graphql's CommonJS build for Pothos,
// while a bundling test runner hands this file the ESM build, whose printer rejects the schema's
// types as coming "from another realm". require() gets the same instance in both.
const { printSchema } = createRequire(import.meta.url)('graphql') as typeof import('graphql');

export const SCHEMA_FILE = fileURLToPath(new URL('../../schema/schema.graphql', import.meta.url));

export function printGraphQLSchema(): string {
  return `${printSchema(schema)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = printGraphQLSchema();
  if (process.argv.includes('--write')) {
    await writeFile(SCHEMA_FILE, text);
    console.log(`wrote ${SCHEMA_FILE}`);
  } else {
    process.stdout.write(text);
  }
}
