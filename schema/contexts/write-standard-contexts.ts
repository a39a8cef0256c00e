// Writes the standard JSON-LD contexts our credentials use into schema/contexts/, taken from the
// npm packages that publish them (never edited by hand), and index.json mapping every context URI
// we serve (these and our own agentiam-v1.jsonld) to its file. Verifiers load contexts from these
// files only: nothing is fetched from the network at issue or verify time.
//
// Run `npm run schema:contexts` after upgrading one of the context packages; the test
// tests/shared/agentiam/contexts.test.ts fails while the committed copies differ from them.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as statusContext from '@digitalbazaar/vc-bitstring-status-list-context';
import credentialsContext from 'credentials-context';
import didContext from 'did-context';
import ed25519Context from 'ed25519-signature-2020-context';

const OWN_CONTEXTS = { 'https://agent-gateway.dev/contexts/agentiam/v1': 'agentiam-v1.jsonld' };

const STANDARD_CONTEXTS: ReadonlyArray<{ uri: string; file: string; document: unknown }> = [
  {
    uri: credentialsContext.CONTEXT_URL,
    file: 'credentials-v1.jsonld',
    document: credentialsContext.CONTEXT,
  },
  {
    uri: statusContext.CONTEXT_URL,
    file: 'credentials-status-v1.jsonld',
    document: statusContext.CONTEXT,
  },
  {
    uri: ed25519Context.CONTEXT_URL,
    file: 'ed25519-2020-v1.jsonld',
    document: ed25519Context.CONTEXT,
  },
  { uri: didContext.CONTEXT_URL, file: 'did-v1.jsonld', document: didContext.CONTEXT },
];

const directory = dirname(fileURLToPath(import.meta.url));
const index: Record<string, string> = {};
for (const { uri, file, document } of STANDARD_CONTEXTS) {
  writeFileSync(join(directory, file), `${JSON.stringify(document, null, 2)}\n`);
  index[uri] = file;
}
Object.assign(index, OWN_CONTEXTS);
writeFileSync(join(directory, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
console.log(`wrote ${STANDARD_CONTEXTS.length} standard contexts and index.json to ${directory}`);
