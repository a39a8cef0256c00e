// Each process serving the data plane has its own token signing key (DESIGN.md §6a): created in
// its data directory on the first start (0600), kept across restarts, its public half upserted
// into token_signing_keys and served in its JWKS at once. The control plane alone has none.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_SIGNING_KEY_FILE } from '../../../runtime/token-signing-key.js';
import { type Database, openDatabase } from '../../../storage/engine/database.js';
import { killCliProcesses, runCli, runCliToEnd } from '../../support/cli-process.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../../support/databases.js';
import { SPLIT_PUBLIC_URL } from '../../support/public-url.js';

afterEach(killCliProcesses);

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: token signing key process tests are SKIPPED.');
}

(postgresUrl ? describe : describe.skip)('token signing keys of separate processes', () => {
  const schema = uniqueSchemaName();
  let cpDir: string;
  let dpDir: string;
  let db: Database | undefined;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    cpDir = await mkdtemp(join(tmpdir(), 'agw-cp-'));
    dpDir = await mkdtemp(join(tmpdir(), 'agw-dp-'));
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

  it('a data plane creates its key, keeps it across restarts, registers and serves it', async () => {
    const credentialFile = join(dpDir, 'credential');
    const registered = await runCliToEnd(
      ['data-plane', 'register', '--name', 'dp-keys', '--credential-file', credentialFile],
      env,
    );
    expect(registered.code, registered.stderr.join('\n')).toBe(0);
    const controlPlane = runCli(['control-plane'], { ...env, AGENT_GATEWAY_DATA_DIR: cpDir });
    const cpUrl = (await controlPlane.waitForLog('ready', 180_000)).url as string;
    const startDataPlane = async () => {
      const cli = runCli(
        ['data-plane', '--control-plane', cpUrl, '--credential-file', credentialFile],
        { ...env, AGENT_GATEWAY_DATA_DIR: dpDir },
      );
      const url = (await cli.waitForLog('ready', 180_000)).url as string;
      return { cli, url };
    };

    let dataPlane = await startDataPlane();
    const file = join(dpDir, TOKEN_SIGNING_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const jwk = JSON.parse(await readFile(file, 'utf8')) as JWK;
    const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'sha256');
    await expect(stat(join(cpDir, TOKEN_SIGNING_KEY_FILE))).rejects.toMatchObject({
      code: 'ENOENT',
    });

    db = await openDatabase({ url: postgresUrl, schema });
    const rows = await db.query<{ id: string; publicJwk: JWK }>(
      'select id, "publicJwk" from token_signing_keys',
    );
    expect(rows).toEqual([{ id: kid, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x } }]);
    const jwks = async (url: string) =>
      ((await (await fetch(`${url}/oauth/jwks`)).json()) as { keys: { kid: string }[] }).keys.map(
        (key) => key.kid,
      );
    expect(await jwks(dataPlane.url)).toContain(kid);

    dataPlane.cli.child.kill('SIGTERM');
    expect(await dataPlane.cli.exited).toBe(0);
    dataPlane = await startDataPlane();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(jwk);
    expect(await db.query('select id from token_signing_keys')).toEqual([{ id: kid }]);
    expect(await jwks(dataPlane.url)).toContain(kid);
  }, 400_000);
});
