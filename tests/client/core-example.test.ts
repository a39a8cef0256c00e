// client/examples/governed-tool.mjs runs as a new user runs it after `npm start`: a child
// process with the admin key file, against a real gateway (here a test gateway listening on
// loopback), importing the built @agent-gateway/client. It prints an allowed call that ran the
// tool and a denied call that did not; run twice, it reuses what the first run set up.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { type SpawnTestGateway, startSpawnGateway } from '../control-plane/spawn/support.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';

const root = join(import.meta.dirname, '..', '..');
const example = join(root, 'client', 'examples', 'governed-tool.mjs');

describe('client/examples/governed-tool.mjs', () => {
  let gateway: SpawnTestGateway;
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(join(root, 'client', 'dist', 'index.js'))) {
      spawnSync('npm', ['run', 'build', '--workspace', '@agent-gateway/client'], { cwd: root });
    }
    gateway = await startSpawnGateway(quickDatabaseKind, { servers: {} });
    dir = await mkdtemp(join(tmpdir(), 'client-example-'));
    const adminKey = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
    await writeFile(join(dir, 'admin-api-key'), `${adminKey}\n`, { mode: 0o600 });
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // Asynchronous: the gateway answering the example lives in this process's event loop.
  const run = () =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [example],
        {
          cwd: root,
          encoding: 'utf8',
          env: {
            ...process.env,
            GATEWAY_URL: gateway.url,
            ADMIN_KEY_FILE: join(dir, 'admin-api-key'),
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          resolve({ status: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });

  it('allows one call (the tool runs) and denies the other (it does not), twice', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await run();
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toEqual([
        'allowed call:',
        '  (the tool runs: paying 120 to acme)',
        '  result: {"paid":120,"to":"acme"}',
        'denied call:',
        expect.stringMatching(
          /^ {2}GatewayDenied: NPL_POLICY_BLOCK \(rule no_wire_transfers, audit [0-9a-f-]{36}\)$/,
        ),
      ]);
    }
  });
});
