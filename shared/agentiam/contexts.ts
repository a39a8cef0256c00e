// The JSON-LD contexts of AgentIAM credentials, read once from the committed copies in
// schema/contexts/ (index.json maps each context URI to its file). They are the only contexts a
// credential may use: the document loader serves them and nothing else, so no context is ever
// fetched from the network, and the gateway serves the same files at GET /contexts/<file>.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPackageRoot } from '../package-root.js';

export const CONTEXT_URIS = {
  credentialsV1: 'https://www.w3.org/2018/credentials/v1',
  statusV1: 'https://www.w3.org/ns/credentials/status/v1',
  ed25519V1: 'https://w3id.org/security/suites/ed25519-2020/v1',
  didV1: 'https://www.w3.org/ns/did/v1',
  agentiamV1: 'https://agent-gateway.dev/contexts/agentiam/v1',
} as const;

export interface ContextDocument {
  /** File name under schema/contexts/ (also the last segment of GET /contexts/<file>). */
  readonly file: string;
  /** The context file's text, exactly as committed (what GET /contexts/<file> serves). */
  readonly text: string;
  readonly document: object;
}

let byUri: ReadonlyMap<string, ContextDocument> | undefined;
let byFile: ReadonlyMap<string, { uri: string; text: string }> | undefined;

function contextsDirectory(): string {
  return join(findPackageRoot(), 'schema', 'contexts');
}

/** Every context we use, by URI; read from schema/contexts/ on the first call. */
export function loadContexts(): ReadonlyMap<string, ContextDocument> {
  if (byUri !== undefined) return byUri;
  const directory = contextsDirectory();
  const index = JSON.parse(readFileSync(join(directory, 'index.json'), 'utf8')) as Record<
    string,
    string
  >;
  const contexts = new Map<string, ContextDocument>();
  for (const [uri, file] of Object.entries(index)) {
    const text = readFileSync(join(directory, file), 'utf8');
    contexts.set(uri, { file, text, document: JSON.parse(text) as object });
  }
  byUri = contexts;
  return contexts;
}

/** The context served as GET /contexts/<file>; undefined for any other name. */
export function contextFile(file: string): { uri: string; text: string } | undefined {
  if (byFile === undefined) {
    byFile = new Map([...loadContexts()].map(([uri, { file, text }]) => [file, { uri, text }]));
  }
  return byFile.get(file);
}
