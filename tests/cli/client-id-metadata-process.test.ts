// Client ID metadata documents in the gateway process itself (issue 28, §4): `agent-gateway
// start`, as `npm start` runs it, reads a metadata document from the loopback HTTPS server of
// tests/support/metadata-document-server.ts when it trusts that server's CA through
// NODE_EXTRA_CA_CERTS (and allows private addresses, the server being on loopback): the
// authorization then goes past the document to the agent's proof (here none: access_denied
// through the redirect URI). Without the CA the same request is refused 400 CIMD_FETCH_FAILED, and
// without AGENT_GATEWAY_CIMD_ALLOW_PRIVATE 400 CIMD_ADDRESS_FORBIDDEN, the document never fetched.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, killCliProcesses, runCli } from '../support/cli-process.js';
import {
  type MetadataDocumentServer,
  startMetadataDocumentServer,
  TEST_CA_FILE,
} from '../support/metadata-document-server.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

describe('client ID metadata documents in `agent-gateway start`', () => {
  let documents: MetadataDocumentServer;
  let clientId: string;
  const running: CliProcess[] = [];

  beforeAll(async () => {
    documents = await startMetadataDocumentServer();
    clientId = `${documents.origin}/client.json`;
    documents.serve('/client.json', {
      client_id: clientId,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    });
  });
  afterAll(async () => {
    for (const gateway of running) gateway.child.kill('SIGTERM');
    await killCliProcesses();
    await documents?.close();
  });

  async function start(env: NodeJS.ProcessEnv): Promise<string> {
    const gateway = runCli(['start'], {
      AGENT_GATEWAY_DATA_DIR: await mkdtemp(join(tmpdir(), 'agw-cimd-')),
      AGENT_GATEWAY_PORT: '0',
      ...env,
    });
    running.push(gateway);
    return (await gateway.waitForLog('ready', 180_000)).url as string;
  }

  async function authorize(url: string) {
    const request = new URL(`${url}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'S256',
      state: 'st',
      resource: 'mcp://files',
      agent_credential: '{}',
      agent_proof: 'x',
    })) {
      request.searchParams.set(name, value);
    }
    const response = await fetch(request, { redirect: 'manual' });
    return {
      status: response.status,
      location: response.headers.get('location'),
      body:
        response.status === 302 ? undefined : ((await response.json()) as Record<string, unknown>),
    };
  }

  it('fetches the document with the CA of NODE_EXTRA_CA_CERTS, and refuses without it or on a private address', async () => {
    const [trusting, untrusting, strict] = await Promise.all([
      start({ NODE_EXTRA_CA_CERTS: TEST_CA_FILE, AGENT_GATEWAY_CIMD_ALLOW_PRIVATE: 'true' }),
      start({ AGENT_GATEWAY_CIMD_ALLOW_PRIVATE: 'true' }),
      start({ NODE_EXTRA_CA_CERTS: TEST_CA_FILE }),
    ]);
    const metadata = (await (
      await fetch(`${trusting}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);

    const fetchedBefore = documents.requested.length;
    const past = await authorize(trusting as string);
    expect(past.status).toBe(302);
    const location = new URL(past.location as string);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(documents.requested.length).toBe(fetchedBefore + 1);

    const refused = await authorize(untrusting as string);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: 'invalid_client',
      reasonCode: 'CIMD_FETCH_FAILED',
    });

    const before = documents.requested.length;
    const forbidden = await authorize(strict as string);
    expect(forbidden.status).toBe(400);
    expect(forbidden.body).toMatchObject({
      error: 'invalid_client',
      reasonCode: 'CIMD_ADDRESS_FORBIDDEN',
    });
    expect(documents.requested.length).toBe(before);
  });
});
