// Events written by a data plane in another process reach the control plane's subscribers: a
// deny on a standalone data plane is audited there, and the control plane's `auditTrail`
// subscription (graphql-ws) receives the entry through PostgreSQL LISTEN/NOTIFY.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { killCliProcesses, runCli, runCliToEnd } from '../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { SPLIT_PUBLIC_URL } from '../support/public-url.js';

afterEach(killCliProcesses);

(postgresUrl ? describe : describe.skip)('events across processes', () => {
  const schema = uniqueSchemaName();
  let dir: string;
  let db: Database | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agw-events-'));
  });
  afterAll(async () => {
    await db?.close();
    await dropSchema(schema);
    await rm(dir, { recursive: true, force: true });
  });

  it("a deny on a standalone data plane streams on the control plane's auditTrail", async () => {
    const env = {
      DATABASE_URL: postgresUrl,
      AGENT_GATEWAY_DB_SCHEMA: schema,
      AGENT_GATEWAY_PORT: '0',
      AGENT_GATEWAY_PUBLIC_URL: SPLIT_PUBLIC_URL,
    };
    const credentialFile = join(dir, 'credential');
    const registered = await runCliToEnd(
      ['data-plane', 'register', '--name', 'dp-events', '--credential-file', credentialFile],
      env,
    );
    expect(registered.code, registered.stderr.join('\n')).toBe(0);
    const controlPlane = runCli(['control-plane'], {
      ...env,
      AGENT_GATEWAY_DATA_DIR: join(dir, 'cp'),
    });
    const cpUrl = (await controlPlane.waitForLog('ready', 180_000)).url as string;
    const adminKey = (await readFile(join(dir, 'cp', 'admin-api-key'), 'utf8')).trim();
    db = await openDatabase({ url: postgresUrl, schema });
    const [tenant] = await db.query<{ id: string }>(
      `select id from tenants where name = 'default'`,
    );
    const tenantId = tenant?.id as string;
    const { id: agentId } = await createAgent(db, {
      tenantId,
      name: 'remote',
      allowedTools: ['*'],
      publicKey: `test-key-${randomBytes(16).toString('hex')}`,
    });
    await updateGatewayPolicy(db, tenantId, { trustedServers: [] }, 'test');
    const dataPlane = runCli(
      ['data-plane', '--control-plane', cpUrl, '--credential-file', credentialFile],
      { ...env, AGENT_GATEWAY_DATA_DIR: join(dir, 'dp') },
    );
    const dpUrl = (await dataPlane.waitForLog('ready', 180_000)).url as string;

    const client = createClient({
      url: `${cpUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${adminKey}` },
      retryAttempts: 0,
    });
    const received: { action: string; resourceId: string; metadata: { reasonCode?: string } }[] =
      [];
    const stop = client.subscribe(
      {
        query: 'subscription { auditTrail(action: "inspect.deny") { action resourceId metadata } }',
      },
      {
        next: (result) => {
          const entry = (result.data as { auditTrail?: (typeof received)[number] })?.auditTrail;
          if (entry) received.push(entry);
        },
        error: () => {},
        complete: () => {},
      },
    );
    try {
      // The subscription is live once the server answers it; retry the deny until one arrives.
      const deadline = Date.now() + 15_000;
      while (received.length === 0 && Date.now() < deadline) {
        const response = await fetch(`${dpUrl}/api/v1/mcp/gateway/inspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
          body: JSON.stringify(inspectBody(agentId, { server: 'nowhere' })),
        });
        await response.arrayBuffer();
        // 401 until the data plane has the key's snapshot; 403 once it denies.
        expect([401, 403, 503]).toContain(response.status);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(received[0]).toMatchObject({
        action: 'inspect.deny',
        resourceId: agentId,
        metadata: { reasonCode: 'MCP_SERVER_NOT_WHITELISTED' },
      });
    } finally {
      stop();
      await client.dispose();
      dataPlane.child.kill('SIGTERM');
      controlPlane.child.kill('SIGTERM');
      await Promise.all([dataPlane.exited, controlPlane.exited]);
    }
  }, 400_000);
});
