// Rotating a data plane's token signing key (issue 22, item 14): what `agent-gateway token-key
// rotate` does (rotateTokenSigningKey on the process's data directory and database) reaches a
// running process with the next snapshot, which then signs with the new kid; a token signed
// before keeps verifying, and the JWKS lists both keys, the new one first, until the retired
// key's retention (the longest token lifetime plus the switch allowance) has passed; then it is
// dropped and its tokens are no longer active. The CLI itself: tests/cli/token-key.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rotateTokenSigningKey } from '../../../runtime/token-signing-key.js';
import { RETIRED_TOKEN_KEY_RETENTION_SECONDS } from '../../../shared/oauth/token-lifetimes.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/until.js';
import { addClient, basic, postForm, type TestClient } from './oauth-fixture.js';

describeEachDatabase('rotating the token signing key', (kind) => {
  let dataDir: string;
  let gateway: TestGateway;
  let client: TestClient;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'agw-token-key-'));
    gateway = await startTestGateway(kind, { tokenSigningKeyDir: dataDir });
    client = await addClient(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const auth = () => ({ authorization: basic(client.clientId, client.secret!) });
  async function issue(): Promise<string> {
    const answer = await postForm(
      `${gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource: 'mcp://files' },
      auth(),
    );
    expect(answer.status).toBe(200);
    return answer.body.access_token as string;
  }
  async function active(token: string): Promise<unknown> {
    const answer = await postForm(`${gateway.url}/oauth/introspect`, { token }, auth());
    expect(answer.status).toBe(200);
    return answer.body.active;
  }
  async function jwksKids(): Promise<string[]> {
    const response = await fetch(`${gateway.url}/oauth/jwks`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid);
  }

  it('switches a running process to the new key; tokens of the old one verify until its retention ends', async () => {
    const signer = gateway.runtime.tokenSigner!;
    const oldKid = signer.kid;
    const before = await issue();
    expect(decodeProtectedHeader(before).kid).toBe(oldKid);

    const rotation = await rotateTokenSigningKey(gateway.db, dataDir);
    expect(rotation.previousKid).toBe(oldKid);
    expect(rotation.kid).not.toBe(oldKid);
    await gateway.sync();
    await until(
      async () => signer.kid,
      (kid) => kid === rotation.kid,
      'the process signs with the rotated key',
    );

    const after = await issue();
    expect(decodeProtectedHeader(after).kid).toBe(rotation.kid);
    expect(await jwksKids()).toEqual([rotation.kid, oldKid]);
    expect(await active(before)).toBe(true);
    expect(await active(after)).toBe(true);
    const rows = await gateway.db.query<{ id: string; retired: boolean }>(
      `select id, "retiredAt" is not null as retired from token_signing_keys order by "createdAt"`,
    );
    expect(rows).toEqual([
      { id: oldKid, retired: true },
      { id: rotation.kid, retired: false },
    ]);

    // The retention ends (the retirement is moved back instead of waiting 16 minutes): the next
    // snapshot drops the key, and what it signed is no longer active.
    await gateway.db.query(
      `update token_signing_keys set "retiredAt" = now() - make_interval(secs => $2) where id = $1`,
      [oldKid, RETIRED_TOKEN_KEY_RETENTION_SECONDS + 1],
    );
    await gateway.sync();
    expect(await jwksKids()).toEqual([rotation.kid]);
    expect(await active(before)).toBe(false);
    expect(await active(after)).toBe(true);
  });
});
