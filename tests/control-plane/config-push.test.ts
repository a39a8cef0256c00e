// Config push between two processes (docs/config-push.md): a control plane and a data plane run
// by the real CLI, sharing one PostgreSQL schema. A gateway-policy change made through GraphQL is
// enforced by the data plane within the push budget; the data plane keeps serving (also across
// its own restart) while the control plane is down, and catches up when it returns.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { type Database, openDatabase } from '../../storage/engine/database.js';
import { type CliProcess, killCliProcesses, runCli, runCliToEnd } from '../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { SPLIT_PUBLIC_URL } from '../support/public-url.js';
import { until } from '../support/until.js';

afterEach(killCliProcesses);

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: config push tests are SKIPPED (they need PostgreSQL).');
}

(postgresUrl ? describe : describe.skip)('config push between separate processes', () => {
  const schema = uniqueSchemaName();
  let cpDir: string;
  let dpDir: string;
  let credentialFile: string;
  let db: Database;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    cpDir = await mkdtemp(join(tmpdir(), 'agw-cp-'));
    dpDir = await mkdtemp(join(tmpdir(), 'agw-dp-'));
    credentialFile = join(dpDir, 'credential');
    env = {
      DATABASE_URL: postgresUrl,
      AGENT_GATEWAY_DB_SCHEMA: schema,
      AGENT_GATEWAY_PORT: '0',
      AGENT_GATEWAY_PUBLIC_URL: SPLIT_PUBLIC_URL,
    };
  });
  afterAll(async () => {
    await db?.close();
    await dropSchema(schema);
    await rm(cpDir, { recursive: true, force: true });
    await rm(dpDir, { recursive: true, force: true });
  });

  const startControlPlane = async (port = '0'): Promise<{ cli: CliProcess; url: string }> => {
    const cli = runCli(['control-plane'], {
      ...env,
      AGENT_GATEWAY_DATA_DIR: cpDir,
      AGENT_GATEWAY_PORT: port,
    });
    const ready = await cli.waitForLog('ready', 180_000);
    return { cli, url: ready.url as string };
  };
  const startDataPlane = async (
    controlPlaneUrl: string,
  ): Promise<{ cli: CliProcess; url: string }> => {
    const cli = runCli(
      ['data-plane', '--control-plane', controlPlaneUrl, '--credential-file', credentialFile],
      // Restarted while the control plane is down, it serves its persisted snapshot after this.
      { ...env, AGENT_GATEWAY_DATA_DIR: dpDir, AGENT_GATEWAY_STARTUP_SNAPSHOT_WAIT_MS: '1000' },
    );
    const ready = await cli.waitForLog('ready', 180_000);
    return { cli, url: ready.url as string };
  };
  const stop = async (cli: CliProcess) => {
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  };

  it('pushes a GraphQL change to a remote data plane, survives the control plane going away and catches up', async () => {
    const registered = await runCliToEnd(
      ['data-plane', 'register', '--name', 'dp-1', '--credential-file', credentialFile],
      env,
    );
    expect(registered.code, registered.stderr.join('\n')).toBe(0);
    expect(await readFile(credentialFile, 'utf8')).toMatch(/^agdp_[a-z0-9]{12}_[\w-]{43}\n$/);
    const again = await runCliToEnd(['data-plane', 'register', '--name', 'dp-1'], env);
    expect(again.code).toBe(1);
    expect(again.stderr.some((line) => line.startsWith('DATA_PLANE_NAME_TAKEN: '))).toBe(true);

    let controlPlane = await startControlPlane();
    const adminKey = (await readFile(join(cpDir, 'admin-api-key'), 'utf8')).trim();
    db = await openDatabase({ url: postgresUrl, schema });
    const [tenant] = await db.query<{ id: string }>(
      `select id from tenants where name = 'default'`,
    );
    const tenantId = tenant?.id as string;
    const { id: agentId } = await createAgent(db, {
      tenantId,
      name: 'pushed',
      role: 'agent',
      allowedTools: ['*'],
      publicKey: `test-key-${randomBytes(16).toString('hex')}`,
    });
    await registerMcpServer(db, {
      tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await updateGatewayPolicy(db, tenantId, { trustedServers: ['files'] }, 'test');

    let dataPlane = await startDataPlane(controlPlane.url);
    // The operator console is the control plane's, on the origin of /graphql; data planes have none.
    const consolePage = await fetch(`${controlPlane.url}/console`);
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get('content-security-policy')).toContain("script-src 'self'");
    await consolePage.arrayBuffer();
    const noConsole = await fetch(`${dataPlane.url}/console`);
    expect(noConsole.status).toBe(404);
    await noConsole.arrayBuffer();
    const inspect = async (): Promise<number> => {
      const response = await fetch(`${dataPlane.url}/api/v1/mcp/gateway/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
        body: JSON.stringify(inspectBody(agentId)),
      });
      await response.arrayBuffer();
      return response.status;
    };
    // The setup above reaches the control plane by its fingerprint poll, then the data plane.
    await until(inspect, (status) => status === 200, 'setup served', 10_000);

    const graphql = async (query: string) => {
      const response = await fetch(`${controlPlane.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as { data?: unknown; errors?: unknown };
    };
    // Warm the GraphQL path up (first-request costs are not push latency).
    expect((await graphql('{ gatewayPolicy { blockedTools } }')).errors).toBeUndefined();
    const started = performance.now();
    const result = await graphql(
      'mutation { updateGatewayPolicy(input: { blockedTools: ["echo"] }) { ' +
        '... on MutationUpdateGatewayPolicySuccess { data { blockedTools } } } }',
    );
    expect(result.errors).toBeUndefined();
    await until(inspect, (status) => status === 403, 'policy change enforced', 5_000);
    const pushMs = performance.now() - started;
    console.log(
      `config push: GraphQL mutation → enforced on the remote data plane in ${pushMs.toFixed(1)} ms`,
    );
    // A report, not a budget (config-push.bench.ts measures it): the bound only catches a push
    // that waited for something else, and holds on a loaded machine.
    expect(pushMs).toBeLessThan(10_000);

    // The data plane reported what it applied.
    await until(
      () => db.query<{ v: number | null }>('select "appliedSnapshotVersion" as v from data_planes'),
      (rows) => Array.isArray(rows) && (rows[0]?.v ?? 0) >= 2,
      'acknowledged',
      5_000,
    );

    // A wrong credential: 401 on the stream, and a data plane with it says why.
    const wrong = join(dpDir, 'wrong-credential');
    const good = (await readFile(credentialFile, 'utf8')).trim();
    await writeFile(wrong, `${good.slice(0, -4)}AAAA\n`);
    const refused = await fetch(`${controlPlane.url}/api/v1/control-plane/config-stream`, {
      headers: { authorization: `Bearer ${good.slice(0, -4)}AAAA` },
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { reasonCode: string }).reasonCode).toBe(
      'DATA_PLANE_CREDENTIAL_INVALID',
    );
    const impostor = runCli(
      ['data-plane', '--control-plane', controlPlane.url, '--credential-file', wrong],
      { ...env, AGENT_GATEWAY_DATA_DIR: join(dpDir, 'impostor') },
    );
    const line = await impostor.waitForLog(
      'control plane refused the data-plane credential: revoked; refusing every governed request',
    );
    expect(line.reasonCode).toBe('DATA_PLANE_CREDENTIAL_INVALID');
    await stop(impostor);

    // Control plane down: the data plane keeps enforcing its last snapshot, also after a restart.
    await stop(controlPlane.cli);
    expect(await inspect()).toBe(403);
    await stop(dataPlane.cli);
    dataPlane = await startDataPlane(controlPlane.url);
    expect(dataPlane.cli.stdout.join('\n')).toContain('serving the persisted snapshot');
    expect(await inspect()).toBe(403);

    // A change made while the control plane is away reaches the data plane once it is back.
    await updateGatewayPolicy(db, tenantId, { blockedTools: [] }, 'test');
    expect(await inspect()).toBe(403);
    controlPlane = await startControlPlane(new URL(controlPlane.url).port);
    // The restarted control plane counts versions from 1 again; the data plane still catches up.
    await until(inspect, (status) => status === 200, 'caught up', 15_000);
    await stop(dataPlane.cli);
    await stop(controlPlane.cli);
  }, 400_000);
});
