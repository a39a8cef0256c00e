// Checkpoints in a split deployment: one `agent-gateway control-plane` and three `agent-gateway
// data-plane` processes (the real CLI) on one PostgreSQL schema. The data planes append denies to
// one tenant at once; only the control plane signs, and what it signs is one sequence: every
// checkpoint verifies with the published key, each extends the one before (consistency proofs
// from the control plane, checked here), and the last covers every entry with the export's root.
// Skipped without DATABASE_URL (the planes need PostgreSQL to run apart).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../../control-plane/services/agents.js';
import { updateGatewayPolicy } from '../../../control-plane/services/gateway-policy.js';
import { registerMcpServer } from '../../../control-plane/services/mcp-servers.js';
import { auditLeafHash } from '../../../shared/audit/index.js';
import {
  MerkleFrontier,
  noteSignedBy,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  verifyConsistency,
} from '../../../shared/tlog/index.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { killCliProcesses } from '../../support/cli-process.js';
import { postgresUrl } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { until } from '../../support/until.js';
import { type SplitDeployment, startSplitDeployment } from '../kill-propagation-support.js';

if (!postgresUrl) {
  console.warn('DATABASE_URL is not set: split checkpoint tests are SKIPPED (need PostgreSQL).');
}

const DENIES_PER_PLANE = 25;

(postgresUrl ? describe : describe.skip)('audit checkpoints across processes', () => {
  let d: SplitDeployment;
  let agentId: string;

  const get = (url: string, init: RequestInit = {}) =>
    fetch(url, { ...init, headers: { authorization: `Bearer ${d.adminKey}` } });
  const deny = async (planeUrl: string) => {
    const response = await fetch(`${planeUrl}/api/v1/mcp/gateway/inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${d.adminKey}` },
      body: JSON.stringify(inspectBody(agentId, { server: 'files', tool: 'drop_table' })),
    });
    return response.status;
  };

  beforeAll(async () => {
    d = await startSplitDeployment({
      count: 3,
      direct: true,
      env: {
        AGENT_GATEWAY_AUDIT_CHECKPOINT_ENTRIES: '7',
        AGENT_GATEWAY_AUDIT_CHECKPOINT_SECONDS: '1',
      },
    });
    await registerMcpServer(d.db, {
      tenantId: d.tenantId,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await updateGatewayPolicy(
      d.db,
      d.tenantId,
      { trustedServers: ['files'], blockedTools: ['drop_table'] },
      'test',
    );
    ({ id: agentId } = await createAgent(d.db, {
      tenantId: d.tenantId,
      name: 'appender',
      role: 'agent',
      allowedTools: ['*'],
      publicKey: newAgentPublicKey(),
    }));
  }, 180_000);
  afterAll(async () => {
    await d?.close();
    await killCliProcesses();
  });

  it('three data planes appending to one tenant yield one consistent sequence of checkpoints', async () => {
    for (const plane of d.dataPlanes) {
      await until(
        () => deny(plane.url),
        (status) => status === 403,
        `${plane.name} serves the setup`,
      );
    }
    // Concurrent appends from every data plane.
    const statuses = await Promise.all(
      d.dataPlanes.flatMap((plane) =>
        Array.from({ length: DENIES_PER_PLANE }, () => deny(plane.url)),
      ),
    );
    expect(statuses.every((status) => status === 403)).toBe(true);
    const [{ head }] = (await d.db.query<{ head: string }>(
      'select seq::text as head from audit_chain_heads where "tenantId" = $1',
      [d.tenantId],
    )) as [{ head: string }];
    // The entries and seconds rules catch up without any demand.
    await until(
      async () =>
        (await get(`${d.controlPlane.url}/api/v1/audit/checkpoint`)).headers.get(
          'x-audit-tree-size',
        ),
      (size) => size === head,
      'a checkpoint covering every entry',
    );
    const keyText = await (await fetch(`${d.controlPlane.url}/api/v1/audit/checkpoint/key`)).text();
    const keys = keyText.trim().split('\n');
    expect(keys).toHaveLength(1);
    const key = parseVerifierKey(keys[0] as string);
    if (typeof key === 'string') throw new Error(key);

    const rows = await d.db.query<{ note: string }>(
      'select note from audit_checkpoints where "tenantId" = $1 order by "treeSize"',
      [d.tenantId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const checkpoints = rows.map(({ note }) => {
      const parsed = parseNote(note);
      if (typeof parsed === 'string') throw new Error(parsed);
      expect(noteSignedBy(parsed, key)).toBe(true);
      const checkpoint = parseCheckpoint(parsed.text);
      if (typeof checkpoint === 'string') throw new Error(checkpoint);
      return checkpoint;
    });
    const sizes = checkpoints.map((checkpoint) => checkpoint.size);
    expect(new Set(sizes).size).toBe(sizes.length);
    for (let i = 1; i < checkpoints.length; i++) {
      const a = checkpoints[i - 1] as (typeof checkpoints)[number];
      const b = checkpoints[i] as (typeof checkpoints)[number];
      if (a.size === 0) continue;
      const response = await get(
        `${d.controlPlane.url}/api/v1/audit/proof/consistency?first=${a.size}&second=${b.size}`,
      );
      const proof = (await response.json()) as { hashes: string[] };
      const hashes = proof.hashes.map((hash) => Buffer.from(hash, 'base64'));
      expect(
        verifyConsistency(a.size, b.size, a.rootHash, b.rootHash, hashes),
        `${a.size}→${b.size}`,
      ).toBe(true);
    }
    // The last one is the root of the whole export, written by every data plane.
    const entries = (await (await get(`${d.controlPlane.url}/api/v1/audit/export`)).json()) as {
      hash: string;
      metadata: { writtenBy?: string };
    }[];
    expect(
      d.dataPlanes.every((plane) => entries.some((e) => e.metadata.writtenBy === plane.name)),
    ).toBe(true);
    const frontier = new MerkleFrontier();
    for (const entry of entries) frontier.append(auditLeafHash(entry.hash));
    const last = checkpoints.at(-1) as (typeof checkpoints)[number];
    expect(last.size).toBe(entries.length);
    expect(Buffer.from(last.rootHash)).toEqual(Buffer.from(frontier.root()));
    // Data planes sign nothing: the checkpoint routes are the control plane's.
    const onDataPlane = await get(`${d.dataPlanes[0]?.url}/api/v1/audit/checkpoint`, {
      method: 'POST',
    });
    expect(onDataPlane.status).toBe(404);
  });
});
