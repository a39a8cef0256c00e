// The HTTP sink (AGENT_GATEWAY_AUDIT_SINK_URL, _TOKEN) against a real endpoint on loopback: each
// checkpoint POSTed as the signed note with the bearer token, in order; an endpoint that answers
// 503 for a while gets them all once it recovers, appends never waiting; an address the egress
// policy forbids is never connected to.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_EGRESS_POLICY, parseEgressList } from '../../../shared/egress/index.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/until.js';

interface Received {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

describe('the HTTP checkpoint sink', () => {
  let server: Server;
  let url: string;
  const received: Received[] = [];
  /** Answers 503 while this is above zero, counting down. */
  let failNext = 0;
  let gw: TestGateway;
  let auditor: string;

  const cut = async () => {
    const response = await fetch(`${gw.url}/api/v1/audit/checkpoint`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auditor}` },
    });
    expect(response.status).toBe(200);
  };
  const stored = async () =>
    (
      await gw.db.query<{ note: string }>(
        'select note from audit_checkpoints order by "createdAt", id',
      )
    ).map((row) => row.note);

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        if (failNext > 0) {
          failNext--;
          response.writeHead(503).end('down for maintenance');
          return;
        }
        received.push({
          authorization: request.headers.authorization,
          contentType: request.headers['content-type'],
          body,
        });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/checkpoints`;
    failNext = 3;
    gw = await startTestGateway('pglite', {
      auditCheckpoints: {
        entries: 1_000_000,
        seconds: 3600,
        sinkUrl: url,
        sinkToken: 'sink-secret',
      },
    });
    auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs every checkpoint in order with the token, catching up after the endpoint was down', async () => {
    for (let i = 0; i < 3; i++) {
      await gw.runtime.audit.append({
        tenantId: gw.tenant.id,
        action: 'test.event',
        resourceType: 'test',
        resourceId: `r${i}`,
      });
      await cut();
    }
    const notes = await stored();
    await until(
      async () => received.length,
      (count) => count === notes.length,
      'the endpoint receiving every checkpoint',
    );
    expect(received.map((r) => r.body)).toEqual(notes);
    expect(received.every((r) => r.authorization === 'Bearer sink-secret')).toBe(true);
    expect(received[0]?.contentType).toBe('text/plain; charset=utf-8');
    expect(failNext).toBe(0);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /agent_gateway_audit_sink_deliveries_total\{sink="http",outcome="failed"\} 3/,
    );
    // GraphQL shows the sink caught up: the error of its down time is cleared.
    const answer = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auditor}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ auditSinks { name kind delivered lastAnchoredAt backlog lastError lastErrorAt anchoredTreeSize anchoredAt } auditCheckpoint { treeSize createdAt } }',
      }),
    });
    const { data } = (await answer.json()) as {
      data: {
        auditSinks: Record<string, unknown>[];
        auditCheckpoint: { treeSize: number; createdAt: string };
      };
    };
    expect(data.auditSinks).toEqual([
      expect.objectContaining({
        name: `http:${url}`,
        kind: 'http',
        delivered: notes.length,
        backlog: 0,
        lastError: null,
        lastErrorAt: null,
      }),
    ]);
    expect(data.auditSinks[0]?.lastAnchoredAt).toEqual(expect.any(String));
    // The tenant's newest checkpoint is anchored there, in GraphQL and in the metrics.
    expect(data.auditSinks[0]).toMatchObject({
      anchoredTreeSize: data.auditCheckpoint.treeSize,
      anchoredAt: data.auditCheckpoint.createdAt,
    });
    // (recorded once the endpoint has answered: waited for.)
    await until(
      async () => (await fetch(`${gw.url}/metrics`)).text(),
      (text) =>
        text.includes(
          `agent_gateway_audit_sink_anchored_tree_size{sink="http",tenant="${gw.tenant.id}"} ${data.auditCheckpoint.treeSize}`,
        ),
      "the tenant's anchored tree size in the metrics",
    );
  });

  it('never connects to an address the egress policy forbids', async () => {
    const before = received.length;
    const refused = await startTestGateway('pglite', {
      egress: { policy: { ...EMPTY_EGRESS_POLICY, deny: parseEgressList('127.0.0.0/8').list } },
      auditCheckpoints: { entries: 1_000_000, seconds: 3600, sinkUrl: url },
    });
    try {
      await until(
        async () => (await fetch(`${refused.url}/metrics`)).text(),
        (text) =>
          /agent_gateway_audit_sink_deliveries_total\{sink="http",outcome="failed"\} [1-9]/.test(
            text,
          ),
        'the refused sink',
      );
      expect(received.length).toBe(before);
    } finally {
      await refused.close();
    }
  });
});
