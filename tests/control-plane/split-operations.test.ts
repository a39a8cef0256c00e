// Operating a split deployment (issue 23, items 3, 7 and 8): one `agent-gateway control-plane` and
// two `agent-gateway data-plane` processes (the real CLI) on one PostgreSQL schema, behind one
// public URL, and the misconfigurations an operator makes:
// - a control plane or data plane without AGENT_GATEWAY_PUBLIC_URL does not start, naming it;
// - a data plane whose public URL is not the control plane's stops at its first connection,
//   naming both, having applied nothing from the stream;
// - a data plane started with a --name its credential was not registered with stops at once;
// - a refused credential is logged once, however often the data plane retries;
// - every audit entry names the process that wrote it.
// Skipped without DATABASE_URL (the planes need PostgreSQL to run apart).
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../control-plane/services/mcp-servers.js';
import { registerDataPlane } from '../../control-plane/stream/credentials.js';
import { SNAPSHOT_FILE } from '../../data-plane/remote/persistence.js';
import { newAgentPublicKey } from '../support/agent-keys.js';
import { type CliProcess, killCliProcesses, runCli, runCliToEnd } from '../support/cli-process.js';
import { postgresUrl } from '../support/databases.js';
import { inspectBody } from '../support/gateway.js';
import { SPLIT_PUBLIC_URL } from '../support/public-url.js';
import { until } from '../support/until.js';
import { type SplitDeployment, startSplitDeployment } from './kill-propagation-support.js';

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: split operations tests are SKIPPED (need PostgreSQL).');
}

/** The JSON log lines of `cli` with this message. */
const logLines = (cli: CliProcess, msg: string): Record<string, unknown>[] =>
  cli.stdout
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);

(postgresUrl ? describe : describe.skip)('operating a split deployment', () => {
  let d: SplitDeployment;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agw-ops-'));
    d = await startSplitDeployment({ count: 2 });
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await updateGatewayPolicy(d.db, d.tenantId, { trustedServers: ['files'] }, 'test');
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await killCliProcesses();
    await rm(root, { recursive: true, force: true });
  }, 60_000);

  /** Env for one more data plane of this deployment, with its own data directory. */
  const planeEnv = (dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    DATABASE_URL: postgresUrl,
    AGENT_GATEWAY_DB_SCHEMA: d.schema,
    AGENT_GATEWAY_PORT: '0',
    AGENT_GATEWAY_PUBLIC_URL: SPLIT_PUBLIC_URL,
    AGENT_GATEWAY_DATA_DIR: join(root, dir),
    ...extra,
  });
  const credentialFileFor = async (name: string): Promise<string> => {
    const { credential } = await registerDataPlane(d.db, name);
    const file = join(root, `${name}.credential`);
    await writeFile(file, `${credential}\n`, { mode: 0o600 });
    return file;
  };

  it('every process prints the public URL it serves under at start', () => {
    for (const cli of [d.controlPlane.cli, ...d.dataPlanes.map((plane) => plane.cli)]) {
      expect(logLines(cli, 'listening')[0]).toMatchObject({
        publicUrl: SPLIT_PUBLIC_URL,
        publicUrlFrom: 'AGENT_GATEWAY_PUBLIC_URL',
      });
    }
    expect(logLines(d.dataPlanes[0]!.cli, 'configuration')[0]).toMatchObject({
      publicUrl: SPLIT_PUBLIC_URL,
      name: 'dp-1',
    });
  });

  it('control-plane and data-plane refuse to start without AGENT_GATEWAY_PUBLIC_URL', async () => {
    const env = { ...planeEnv('no-url'), AGENT_GATEWAY_PUBLIC_URL: '' };
    const controlPlane = await runCliToEnd(['control-plane'], env);
    expect(controlPlane.code).toBe(1);
    expect(controlPlane.stderr.join('\n')).toMatch(
      /^PUBLIC_URL_REQUIRED: AGENT_GATEWAY_PUBLIC_URL is not set: `agent-gateway control-plane`/m,
    );
    const file = await credentialFileFor('dp-no-url');
    const dataPlane = await runCliToEnd(
      ['data-plane', '--control-plane', d.controlPlane.url, '--credential-file', file],
      env,
    );
    expect(dataPlane.code).toBe(1);
    expect(dataPlane.stderr.join('\n')).toMatch(
      /^PUBLIC_URL_REQUIRED: AGENT_GATEWAY_PUBLIC_URL is not set: `agent-gateway data-plane`/m,
    );
    // Nothing started: no log line at all.
    expect(dataPlane.stdout).toEqual([]);
  });

  it('a data plane with another public URL stops at its first connection, having applied nothing', async () => {
    const file = await credentialFileFor('dp-other-url');
    const cli = runCli(
      ['data-plane', '--control-plane', d.controlPlane.url, '--credential-file', file],
      planeEnv('other-url', { AGENT_GATEWAY_PUBLIC_URL: 'http://10.0.0.7:8080' }),
    );
    expect(await cli.exited).toBe(1);
    expect(cli.stderr.join('\n')).toMatch(
      /^DATA_PLANE_PUBLIC_URL_MISMATCH: this data plane has AGENT_GATEWAY_PUBLIC_URL=http:\/\/10\.0\.0\.7:8080 but the control plane has http:\/\/gateway\.test/m,
    );
    const line = cli.stdout
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.reasonCode === 'DATA_PLANE_PUBLIC_URL_MISMATCH');
    expect(line).toMatchObject({
      level: 50,
      reasonCode: 'DATA_PLANE_PUBLIC_URL_MISMATCH',
      publicUrl: 'http://10.0.0.7:8080',
      controlPlanePublicUrl: SPLIT_PUBLIC_URL,
    });
    // Never ready, never applied a snapshot, never persisted one.
    expect(logLines(cli, 'ready')).toEqual([]);
    expect(logLines(cli, 'snapshot applied')).toEqual([]);
    expect(await readdir(join(root, 'other-url'))).not.toContain(SNAPSHOT_FILE);
  }, 60_000);

  it('a data plane started with a --name its credential does not carry stops at once, naming both', async () => {
    const cli = runCli(
      [
        'data-plane',
        '--control-plane',
        d.controlPlane.url,
        '--credential-file',
        d.dataPlanes[0]!.credentialFile,
        '--name',
        'dp-2',
      ],
      planeEnv('wrong-name'),
    );
    expect(await cli.exited).toBe(1);
    expect(cli.stderr.join('\n')).toMatch(
      /^DATA_PLANE_NAME_MISMATCH: --name "dp-2" does not match this credential: it belongs to data plane "dp-1"/m,
    );
    // Before listening: nothing served, nothing connected.
    expect(logLines(cli, 'listening')).toEqual([]);
    expect(logLines(cli, 'config stream connected')).toEqual([]);
  }, 60_000);

  it('a refused credential is logged once while the refusal repeats', async () => {
    // Well-formed, unknown: the control plane refuses it on every attempt.
    const file = join(root, 'unknown.credential');
    await writeFile(file, `agdp_${'x'.repeat(12)}_${randomBytes(32).toString('base64url')}\n`, {
      mode: 0o600,
    });
    const cli = runCli(
      ['data-plane', '--control-plane', d.controlPlane.url, '--credential-file', file],
      planeEnv('refused', { AGENT_GATEWAY_LOG_LEVEL: 'debug' }),
    );
    const message =
      'control plane refused the data-plane credential: revoked; refusing every governed request';
    // Each attempt after the first logs its repeat at debug level: five attempts in all.
    await until(
      async () => logLines(cli, message).length,
      (count) => count >= 5,
      'five refused attempts',
      60_000,
    );
    const lines = logLines(cli, message);
    expect(lines.filter((line) => (line.level as number) >= 40)).toEqual([
      expect.objectContaining({ level: 50, reasonCode: 'DATA_PLANE_CREDENTIAL_INVALID' }),
    ]);
    expect(lines.slice(1).every((line) => line.level === 20)).toBe(true);
    // No other message alternates with it (which would log both anew on every attempt).
    expect(logLines(cli, 'config stream ended by the control plane')).toEqual([]);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }, 90_000);

  it('every audit entry names the data plane that wrote it', async () => {
    const { id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'narrow',
      role: 'agent',
      allowedTools: ['echo'],
      publicKey: newAgentPublicKey(),
    });
    const inspect = async (url: string, tool: string) => {
      const response = await fetch(`${url}/api/v1/mcp/gateway/inspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
        body: JSON.stringify(inspectBody(agentId, { server: 'files', tool })),
      });
      await response.arrayBuffer();
      return response.status;
    };
    for (const plane of d.dataPlanes) {
      await until(
        () => inspect(plane.url, 'echo'),
        (status) => status === 200,
        plane.name,
      );
      expect(await inspect(plane.url, `forbidden-on-${plane.name}`)).toBe(403);
    }
    const rows = await d.db.query<{ tool: string; writtenBy: string }>(
      `select metadata->>'tool' as tool, metadata->>'writtenBy' as "writtenBy" from audit_entries
       where "tenantId" = $1 and metadata->>'tool' like 'forbidden-on-%' order by seq`,
      [d.tenantId],
    );
    expect(rows).toEqual([
      { tool: 'forbidden-on-dp-1', writtenBy: 'dp-1' },
      { tool: 'forbidden-on-dp-2', writtenBy: 'dp-2' },
    ]);
    // The control plane's own entries (the first start's bootstrap) name it too.
    const [bootstrap] = await d.db.query<{ writtenBy: string }>(
      `select metadata->>'writtenBy' as "writtenBy" from audit_entries
       where "tenantId" = $1 order by seq limit 1`,
      [d.tenantId],
    );
    expect(bootstrap?.writtenBy).toBe('control-plane');
  }, 60_000);
});
