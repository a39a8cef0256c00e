// schema/schema.graphql is printed from the Pothos code and committed: it must be current, and the
// result and input types docs/graphql.md names must be the schema's (a reader copies them into
// fragments and variables).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { printGraphQLSchema, SCHEMA_FILE } from '../../../control-plane/graphql/print-schema.js';
import { REPO_ROOT } from '../../support/cli-process.js';

it('the committed schema/schema.graphql is what the code builds (npm run schema:graphql)', async () => {
  const committed = await readFile(SCHEMA_FILE, 'utf8');
  expect(committed, 'schema/schema.graphql is stale: run `npm run schema:graphql`').toBe(
    printGraphQLSchema(),
  );
});

it('every result and input type docs/graphql.md names is a type of the schema', async () => {
  const docs = await readFile(join(REPO_ROOT, 'docs', 'graphql.md'), 'utf8');
  const schema = printGraphQLSchema();
  const named = new Set(docs.match(/\b[A-Z]\w*(?:Payload|Success|Result|Error|Input)\b/g));
  expect(named.size).toBeGreaterThan(5);
  const missing = [...named].filter(
    (name) => !new RegExp(`^(?:type|union|input) ${name}\\b`, 'm').test(schema),
  );
  expect(missing, 'named in docs/graphql.md but not in the schema').toEqual([]);
});
