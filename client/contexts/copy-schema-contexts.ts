// Copies the gateway's JSON-LD contexts (schema/contexts/index.json and every file it names) into
// client/contexts/, byte for byte: the package signs with its own copies, never with contexts
// fetched at signing time, and must sign with exactly the ones the gateway verifies with.
//
// Run `npx tsx client/contexts/copy-schema-contexts.ts` after `npm run schema:contexts` changes
// schema/contexts/; tests/client/delegation-contexts.test.ts fails while the copies differ.
// This script is not part of the published package (only the .jsonld files and index.json are).
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../../schema/contexts/', import.meta.url);
const target = new URL('./', import.meta.url);
const index = JSON.parse(readFileSync(new URL('index.json', source), 'utf8')) as Record<
  string,
  string
>;
const files = ['index.json', ...Object.values(index)];
for (const file of readdirSync(target)) {
  if (file.endsWith('.jsonld') && !files.includes(file)) rmSync(new URL(file, target));
}
for (const file of files) copyFileSync(new URL(file, source), new URL(file, target));
console.log(`copied ${files.length} files to ${fileURLToPath(target)}`);
