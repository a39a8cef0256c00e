// `agent-gateway audit verify --checkpoint` and `audit export --proofs` as an auditor runs them,
// against checkpoints a real gateway signed: the rewrite the chain check alone accepts (deny
// entries removed, hashes and seals recomputed with the project's own functions) fails against a
// checkpoint cut before it; proofs anchor what the export does not reach; keys come from --key or
// from the gateway's database; every usage error exits 2.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AuditEntry } from '../../shared/audit/index.js';
import { formatVerifierKey, noteSigner } from '../../shared/tlog/index.js';
import { rechainWithout } from '../support/audit-tampering.js';
import { CLI_ENTRY, REPO_ROOT } from '../support/cli-process.js';
import { describeEachDatabase, postgresUrl } from '../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, CI: '', DATABASE_URL: '', AGENT_GATEWAY_DB_SCHEMA: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}

describeEachDatabase('audit verify against signed checkpoints', (kind) => {
  let gw: TestGateway;
  let auditor: string;
  let key: string;
  /** A checkpoint cut after the first six entries (three of them denies). */
  let early: string;
  const dir = mkdtempSync(join(tmpdir(), 'audit-anchored-'));
  const file = (name: string, text: string) => {
    const path = join(dir, `${kind}-${name}`);
    writeFileSync(path, text);
    return path;
  };
  const call = async (path: string, method = 'GET') => {
    const response = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${auditor}` },
    });
    expect(response.status).toBe(200);
    return response.text();
  };
  const database = () => ({ DATABASE_URL: postgresUrl, AGENT_GATEWAY_DB_SCHEMA: gw.db.schema });
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    gw = await startTestGateway(kind, {
      auditCheckpoints: { entries: 1_000_000, seconds: 3600, masterKey },
    });
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'], blockedTools: ['drop_table'] });
    // Denies among other entries: the rewrite below removes the denies and keeps the rest.
    for (let i = 0; i < 6; i++) {
      if (i === 3) early = await call('/api/v1/audit/checkpoint', 'POST');
      await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'drop_table' }));
      await gw.runtime.audit.append({
        tenantId: gw.tenant.id,
        action: 'test.event',
        resourceType: 'test',
        resourceId: `r${i}`,
      });
    }
    key = (await (await fetch(`${gw.url}/api/v1/audit/checkpoint/key`)).text()).trim();
  });
  afterAll(() => gw?.close());

  it('catches the rewrite the chain check alone accepts, with a checkpoint cut before it', async () => {
    const kept = file('kept.txt', await call('/api/v1/audit/checkpoint', 'POST'));
    await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'drop_table' }));
    const exported = await call('/api/v1/audit/export');
    const entries = JSON.parse(exported) as AuditEntry[];
    expect(entries.filter((entry) => entry.action === 'inspect.deny').length).toBeGreaterThan(1);
    const whole = file('export.json', exported);

    const honest = await cli(['audit', 'verify', whole, '--checkpoint', kept, '--key', key]);
    expect(honest.stderr).toBe('');
    expect(honest.code).toBe(0);
    const size = entries.length - 1;
    expect(honest.stdout).toContain(`checkpoint ${kept} (tree size ${size}): matched`);
    expect(honest.stdout).toContain(
      `anchored: the first ${size} entries are under a signed checkpoint`,
    );

    const forged = file(
      'rewritten.json',
      `${JSON.stringify(
        rechainWithout(entries, (entry) => entry.action === 'inspect.deny'),
        null,
        1,
      )}\n`,
    );
    const chainOnly = await cli(['audit', 'verify', forged]);
    expect(chainOnly.code).toBe(0);
    const anchored = await cli(['audit', 'verify', forged, '--checkpoint', kept, '--key', key]);
    expect(anchored.code).toBe(1);
    expect(anchored.stdout).toContain(`FAILED at ${kept}: AUDIT_CHECKPOINT_NOT_REACHED`);
    // A checkpoint the rewritten export still reaches (6 entries): its root does not match.
    const earlyFile = file('early.txt', early);
    expect((JSON.parse(readFileSync(forged, 'utf8')) as unknown[]).length).toBe(6);
    const json = await cli([
      'audit',
      'verify',
      '--json',
      forged,
      '--checkpoint',
      earlyFile,
      '--key',
      key,
    ]);
    expect(json.code).toBe(1);
    const result = JSON.parse(json.stdout) as {
      ok: boolean;
      anchors: { findings: { code: string; message: string }[] };
    };
    expect(result.ok).toBe(false);
    expect(result.anchors.findings[0]).toMatchObject({ code: 'AUDIT_CHECKPOINT_ROOT_MISMATCH' });
    expect(result.anchors.findings[0]?.message).toContain('among entries 1 to 6');
    // The honest export agrees with that checkpoint too.
    const honestEarly = await cli([
      'audit',
      'verify',
      whole,
      '--checkpoint',
      earlyFile,
      '--key',
      key,
    ]);
    expect(honestEarly.code).toBe(0);
    // A truncated export is shorter than the checkpoint: not reached.
    const truncated = file('truncated.json', `${JSON.stringify(entries.slice(0, 2), null, 1)}\n`);
    const short = await cli(['audit', 'verify', truncated, '--checkpoint', kept, '--key', key]);
    expect(short.code).toBe(1);
    expect(short.stdout).toContain('AUDIT_CHECKPOINT_NOT_REACHED');
  });

  it('reads a checkpoint from the gateway URL with AGENT_GATEWAY_API_KEY, and refuses one signed by another key', async () => {
    await call('/api/v1/audit/checkpoint', 'POST');
    const whole = file('now.json', await call('/api/v1/audit/export'));
    const url = `${gw.url}/api/v1/audit/checkpoint`;
    const run = await cli(['audit', 'verify', whole, '--checkpoint', url, '--key', key], {
      AGENT_GATEWAY_API_KEY: auditor,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`checkpoint ${url} (tree size`);
    const noKey = await cli(['audit', 'verify', whole, '--checkpoint', url, '--key', key]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain(
      'answered 401 (set AGENT_GATEWAY_API_KEY to an API key with audit:read)',
    );
    const stranger = noteSigner(`${new URL(gw.url).host}/audit`, randomBytes(32));
    const other = formatVerifierKey(stranger.name, stranger.publicKey);
    const wrong = await cli(
      ['audit', 'verify', whole, '--checkpoint', url, '--key', key.replace(/\+[^+]+$/, '+AQ==')],
      {
        AGENT_GATEWAY_API_KEY: auditor,
      },
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("option '--key <verifier key>' argument");
    const refused = await cli(['audit', 'verify', whole, '--checkpoint', url, '--key', other], {
      AGENT_GATEWAY_API_KEY: auditor,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`FAILED at ${url}: AUDIT_CHECKPOINT_SIGNATURE_INVALID`);
  });

  it('exits 2 for a missing checkpoint file, a bad proofs file, or no key to trust', async () => {
    const whole = file('usage.json', await call('/api/v1/audit/export'));
    const missing = await cli([
      'audit',
      'verify',
      whole,
      '--checkpoint',
      join(dir, 'nope.txt'),
      '--key',
      key,
    ]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('no such file');
    const badProofs = await cli([
      'audit',
      'verify',
      whole,
      '--proofs',
      file('bad.json', '{"format":"x"}'),
      '--key',
      key,
    ]);
    expect(badProofs.code).toBe(2);
    expect(badProofs.stderr).toContain('is not a proofs file: format is not');
    const kept = file('usage-kept.txt', await call('/api/v1/audit/checkpoint'));
    const noKey = await cli(['audit', 'verify', whole, '--checkpoint', kept], {
      AGENT_GATEWAY_DATA_DIR: join(dir, 'no-such-data-dir'),
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("no --key given, and the gateway's audit keys cannot be read");
  });

  it.runIf(kind === 'postgres')(
    'reads the keys from DATABASE_URL, and anchors exports and slices with the proofs file `audit export --proofs` writes',
    async () => {
      const kept = file('pg-kept.txt', await call('/api/v1/audit/checkpoint', 'POST'));
      const out = join(dir, 'pg-export.json');
      const proofs = join(dir, 'pg-export.proofs.json');
      const exported = await cli(
        ['audit', 'export', '--tenant', gw.tenant.id, '--output', out, '--proofs', proofs],
        database(),
      );
      expect(exported.code).toBe(0);
      // The export is byte for byte what the route serves; the proofs are beside it.
      expect(readFileSync(out, 'utf8')).toBe(await call('/api/v1/audit/export'));
      const verified = await cli(
        ['audit', 'verify', out, '--checkpoint', kept, '--proofs', proofs],
        database(),
      );
      expect(verified.stdout).toContain(`checkpoint ${kept}`);
      expect(verified.code).toBe(0);

      // An old export against a later checkpoint: proven by the consistency proof.
      await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'drop_table' }));
      const later = file('pg-later.txt', await call('/api/v1/audit/checkpoint', 'POST'));
      const unproven = await cli(['audit', 'verify', out, '--checkpoint', later], database());
      expect(unproven.code).toBe(1);
      expect(unproven.stdout).toContain('AUDIT_CHECKPOINT_NOT_REACHED');
      const newer = join(dir, 'pg-newer.proofs.json');
      // A slice from the first entry on: the proofs file carries the inclusion proof of its last.
      const from = (JSON.parse(readFileSync(out, 'utf8')) as AuditEntry[])[1]?.createdAt as string;
      const slice = join(dir, 'pg-slice.json');
      const sliced = await cli(
        [
          'audit',
          'export',
          '--tenant',
          gw.tenant.id,
          '--from',
          from,
          '--output',
          slice,
          '--proofs',
          newer,
        ],
        database(),
      );
      expect(sliced.code).toBe(0);
      expect(sliced.stderr).toContain('inclusion proof of entry');
      const partial = await cli(
        ['audit', 'verify', '--partial', slice, '--proofs', newer, '--checkpoint', later],
        database(),
      );
      expect(partial.code).toBe(0);
      expect(partial.stdout).toContain('proven by the proofs file');
    },
  );

  it.runIf(kind === 'postgres')(
    '`audit rotate-key` retires the key the running gateway signs with; its checkpoints still verify',
    async () => {
      const before = file('pg-before-rotation.txt', await call('/api/v1/audit/checkpoint', 'POST'));
      const wrong = await cli(['audit', 'rotate-key'], {
        ...database(),
        AGENT_GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('MASTER_KEY_MISMATCH');
      const rotated = await cli(['audit', 'rotate-key'], {
        ...database(),
        AGENT_GATEWAY_MASTER_KEY: masterKey.toString('hex'),
      });
      expect(rotated.code).toBe(0);
      const newKey = rotated.stdout.trim();
      expect(rotated.stderr).toContain('still published so its checkpoints verify');
      const published = (
        await (await fetch(`${gw.url}/api/v1/audit/checkpoint/key`)).text()
      ).trim();
      expect(published.split('\n')).toEqual([newKey, key]);
      const after = file('pg-after-rotation.txt', await call('/api/v1/audit/checkpoint', 'POST'));
      const whole = file('pg-rotation.json', await call('/api/v1/audit/export'));
      const withNew = await cli(['audit', 'verify', whole, '--checkpoint', after, '--key', newKey]);
      expect(withNew.code).toBe(0);
      const withOld = await cli(['audit', 'verify', whole, '--checkpoint', before, '--key', key]);
      expect(withOld.code).toBe(0);
      // Without --key: both keys come from the database.
      const stored = await cli(
        ['audit', 'verify', whole, '--checkpoint', before, '--checkpoint', after],
        database(),
      );
      expect(stored.code).toBe(0);
      expect(stored.stdout).toContain(`signed by ${newKey.split('+').slice(0, 2).join('+')}`);
      key = newKey;
    },
  );
});
