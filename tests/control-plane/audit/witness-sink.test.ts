// The witness sink (AGENT_GATEWAY_AUDIT_WITNESS_URL, _KEY) against a minimal C2SP tlog-witness
// written from the specification (tests/support/test-witness.ts): every checkpoint is submitted in
// order with its consistency proof, the witness's cosignature/v1 is verified and served after the
// gateway's signature, a witness that was down is caught up, a sink that does not know the
// witness's size learns it from the 409, and `audit verify --witness-key` names the witness.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditConsistencyProof } from '../../../control-plane/audit/proofs.js';
import { WitnessCheckpointSink } from '../../../control-plane/audit/witness-sink.js';
import {
  cosignedAt,
  parseNote,
  parseWitnessKey,
  type WitnessKey,
} from '../../../shared/tlog/index.js';
import {
  addCosignatures,
  latestAuditCheckpoint,
} from '../../../storage/tables/audit-checkpoints.js';
import { CLI_ENTRY, REPO_ROOT } from '../../support/cli-process.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { startTestWitness, type TestWitness } from '../../support/test-witness.js';
import { until } from '../../support/until.js';

describe('the witness sink', () => {
  let witness: TestWitness;
  let witnessKey: WitnessKey;
  let gw: TestGateway;
  let auditor: string;
  let logKey: string;

  const call = async (path: string, method = 'GET') => {
    const response = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${auditor}` },
    });
    expect(response.status).toBe(200);
    return response.text();
  };
  const append = (n: number) =>
    gw.runtime.audit.append({
      tenantId: gw.tenant.id,
      action: 'test.event',
      resourceType: 'test',
      resourceId: `r${n}`,
    });
  const checkpointCount = async () =>
    (await gw.db.query<{ n: number }>('select count(*)::int as n from audit_checkpoints'))[0]?.n ??
    0;

  beforeAll(async () => {
    witness = await startTestWitness({ name: 'witness.test/w1' });
    witnessKey = parseWitnessKey(witness.verifierKey) as WitnessKey;
    // Down for a while: the sink retries and catches up.
    witness.failNext = 2;
    gw = await startTestGateway('pglite', {
      auditCheckpoints: {
        entries: 1_000_000,
        seconds: 3600,
        witness: { url: witness.url, key: witness.verifierKey },
      },
    });
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
    logKey = (await (await fetch(`${gw.url}/api/v1/audit/checkpoint/key`)).text()).trim();
    // The witness is told which log key to trust for the gateway's origins.
    witness.trust = { prefix: logKey.slice(0, logKey.indexOf('+')), logKey };
  });
  afterAll(async () => {
    await gw?.close();
    await witness?.close();
  });

  it('submits every checkpoint in order and serves the verified cosignature with it', async () => {
    for (let i = 0; i < 3; i++) {
      await append(i);
      await call('/api/v1/audit/checkpoint', 'POST');
    }
    const total = await checkpointCount();
    await until(
      async () => witness.cosigned.length,
      (n) => n === total,
      'the witness cosigning all',
    );
    const sizes = witness.cosigned.map((c) => c.size);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    await until(
      () => call('/api/v1/audit/checkpoint'),
      (note) => note.includes(`\u2014 ${witness.name} `),
      'the cosignature served',
    );
    const served = parseNote(await call('/api/v1/audit/checkpoint'));
    if (typeof served === 'string') throw new Error(served);
    expect(cosignedAt(served.text, served.signatures, witnessKey)).not.toBeNull();
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /agent_gateway_audit_sink_deliveries_total\{sink="witness",outcome="failed"\} [1-9]/,
    );
  });

  it('learns the size the witness has from its 409 and sends the proof from there', async () => {
    await gw.runtime.auditSinks?.stop();
    await append(10);
    await append(11);
    await call('/api/v1/audit/checkpoint', 'POST');
    const latest = await latestAuditCheckpoint(gw.db, gw.tenant.id);
    if (latest === null) throw new Error('no checkpoint');
    const before = witness.state.get(
      `${logKey.slice(0, logKey.indexOf('+'))}/${gw.tenant.id}`,
    )?.size;
    expect(before).toBeLessThan(latest.treeSize);
    // A sink that has never heard from this witness (a restart): it starts from old 0.
    const fresh = new WitnessCheckpointSink({
      url: witness.url,
      key: witnessKey,
      dispatcher: new Agent(),
      consistency: async (tenantId, first, second) =>
        (await auditConsistencyProof(gw.db, tenantId, first, second)).hashes,
      store: (id, lines) => addCosignatures(gw.db, id, lines),
      logger: pino({ level: 'silent' }),
    });
    await fresh.deliver(latest);
    expect(witness.cosigned.at(-1)?.size).toBe(latest.treeSize);
    const stored = await latestAuditCheckpoint(gw.db, gw.tenant.id);
    expect(stored?.cosignatures).toMatch(
      new RegExp(`^\u2014 ${witness.name.replace('.', '\\.')} `),
    );
    // Delivering it again: the witness has it; the same size with the same root is cosigned
    // again, and its newest cosignature replaces the first.
    await fresh.deliver(latest);
    const again = await latestAuditCheckpoint(gw.db, gw.tenant.id);
    expect((again?.cosignatures.match(/\n/g) ?? []).length).toBe(1);
  });

  it('is named by `audit verify --witness-key`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-verify-'));
    const checkpoint = join(dir, 'checkpoint.txt');
    writeFileSync(checkpoint, await call('/api/v1/audit/checkpoint'));
    const exported = join(dir, 'export.json');
    writeFileSync(exported, await call('/api/v1/audit/export'));
    const child = spawn(
      process.execPath,
      [
        CLI_ENTRY,
        'audit',
        'verify',
        exported,
        '--checkpoint',
        checkpoint,
        '--key',
        logKey,
        '--witness-key',
        witness.verifierKey,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    const [code] = (await once(child, 'close')) as [number];
    expect(stdout).toContain(`cosigned by ${witness.name}`);
    expect(code).toBe(0);
  });
});
