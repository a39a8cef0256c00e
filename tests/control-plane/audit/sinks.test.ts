// The file sink as an operator configures it (AGENT_GATEWAY_AUDIT_SINK_FILE) on both databases:
// every checkpoint, in order, byte for byte the signed note the gateway serves; a sink whose
// volume is missing retries and catches up without holding any append back; a sink runner
// started again (a restart) resumes after the last checkpoint it delivered.
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileCheckpointSink, readSinkFile } from '../../../control-plane/audit/file-sink.js';
import { AuditSinkRunner, type SinkStanding } from '../../../control-plane/audit/sinks.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/until.js';

describeEachDatabase('audit checkpoint sinks', (kind) => {
  let gw: TestGateway;
  let auditor: string;
  let volume: string;
  let path: string;

  const cut = async () => {
    const response = await fetch(`${gw.url}/api/v1/audit/checkpoint`, {
      method: 'POST',
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
  const storedNotes = async () =>
    (
      await gw.db.query<{ note: string }>(
        'select note from audit_checkpoints order by "createdAt", id',
      )
    ).map((row) => row.note);
  const sinkNotes = async () => readSinkFile(await readFile(path, 'utf8').catch(() => ''));

  beforeAll(async () => {
    // The sink's volume is not there yet: the sink fails and retries.
    volume = join(await mkdtemp(join(tmpdir(), 'agw-sink-')), 'volume');
    path = join(volume, 'checkpoints.log');
    gw = await startTestGateway(kind, {
      auditCheckpoints: { entries: 1_000_000, seconds: 3600, sinkFile: path },
    });
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
  });
  afterAll(() => gw?.close());

  it('receives every checkpoint in order once its volume is there, appends going on meanwhile', async () => {
    for (let i = 0; i < 3; i++) {
      await append(i);
      await cut();
    }
    await until(
      async () => (await fetch(`${gw.url}/metrics`)).text(),
      (text) =>
        /agent_gateway_audit_sink_deliveries_total\{sink="file",outcome="failed"\} [1-9]/.test(
          text,
        ),
      'the sink failing while its volume is missing',
    );
    // Appends are not held back by the failing sink.
    await append(99);
    // While it fails, GraphQL names why and how much of this tenant waits.
    const failing = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auditor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ auditSinks { kind backlog lastError } }' }),
    });
    const { data } = (await failing.json()) as {
      data: { auditSinks: { kind: string; backlog: number; lastError: string | null }[] };
    };
    expect(data.auditSinks[0]).toMatchObject({ kind: 'file' });
    expect(data.auditSinks[0]?.backlog).toBeGreaterThan(0);
    expect(data.auditSinks[0]?.lastError).toContain('ENOENT');
    await mkdir(volume);
    const stored = await storedNotes();
    expect(stored.length).toBeGreaterThanOrEqual(4);
    const notes = await until(
      sinkNotes,
      (got) => got.length === stored.length,
      'the sink catching up',
    );
    expect(notes).toEqual(stored);
    expect(await readFile(path, 'utf8')).toBe(notes.map((note) => `${note}\n`).join(''));
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /agent_gateway_audit_sink_deliveries_total\{sink="file",outcome="delivered"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /agent_gateway_audit_sink_last_anchored_timestamp_seconds\{sink="file"\} 1\d{9}/,
    );
  });

  it('resumes after a restart where it stopped, missing none', async () => {
    await gw.runtime.auditSinks?.stop();
    const before = (await sinkNotes()).length;
    for (let i = 0; i < 2; i++) {
      await append(100 + i);
      await cut();
    }
    expect((await sinkNotes()).length).toBe(before);
    const standings: SinkStanding[] = [];
    const restarted = new AuditSinkRunner({
      db: gw.db,
      sinks: [new FileCheckpointSink(path)],
      logger: pino({ level: 'silent' }),
      idleMs: 50,
      onResume: (_sink, standing) => standings.push(standing),
    });
    restarted.start();
    try {
      const stored = await storedNotes();
      const notes = await until(
        sinkNotes,
        (got) => got.length === stored.length,
        'the restarted sink',
      );
      expect(notes).toEqual(stored);
      // What it held when it resumed (the metrics' starting point): not the two cut meanwhile.
      const [latest] = await gw.db.query<{ size: number }>(
        'select max("treeSize")::int as size from audit_checkpoints where "tenantId" = $1',
        [gw.tenant.id],
      );
      expect(standings).toHaveLength(1);
      expect(standings[0]?.lastAnchoredAt).toBeInstanceOf(Date);
      const held = standings[0]?.tenants.find((t) => t.tenantId === gw.tenant.id)?.treeSize;
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThanOrEqual((latest?.size ?? 0) - 2);
    } finally {
      await restarted.stop();
    }
  });
});
