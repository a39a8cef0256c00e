// Prints the JSON Schema of NPL policy documents, generated from the zod schema that validates
// them: `tsx shared/npl/print-json-schema.ts` to stdout, `--write` to
// schema/npl-policy.schema.json (committed; tests/shared/npl/json-schema.test.ts fails when the
// committed file differs from what the code generates). Editors and other tools validate policy
// files with it; parsePolicy also checks what a schema cannot say (unique ruleIds, conditions).
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { nplPolicySchema } from './policy-schema.js';

export const NPL_POLICY_SCHEMA_FILE = fileURLToPath(
  new URL('../../schema/npl-policy.schema.json', import.meta.url),
);

export function printNplPolicyJsonSchema(): string {
  const schema = z.toJSONSchema(nplPolicySchema, { target: 'draft-2020-12', io: 'input' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = printNplPolicyJsonSchema();
  if (process.argv.includes('--write')) {
    await writeFile(NPL_POLICY_SCHEMA_FILE, text);
    console.log(`wrote ${NPL_POLICY_SCHEMA_FILE}`);
  } else {
    process.stdout.write(text);
  }
}
