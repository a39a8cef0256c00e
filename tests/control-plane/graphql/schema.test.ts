// schema/schema.graphql is printed from the Pothos code and committed: it must be current.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { printGraphQLSchema, SCHEMA_FILE } from '../../../control-plane/graphql/print-schema.js';

it('the committed schema/schema.graphql is what the code builds (npm run schema:graphql)', async () => {
  const committed = await readFile(SCHEMA_FILE, 'utf8');
  expect(committed, 'schema/schema.graphql is stale: run `npm run schema:graphql`').toBe(
    printGraphQLSchema(),
  );
});
