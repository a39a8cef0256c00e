import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { parseSamples, total } from '../support/metrics.js';

describe('GET /metrics', () => {
  let gateway: TestGateway;
  const tool = 'tool_name_that_must_not_be_a_label';
  const unlistedServer = 'server-that-must-not-be-a-label';

  beforeAll(async () => {
    gateway = await startTestGateway('pglite');
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function scrape(): Promise<{ contentType: string | null; text: string }> {
    const response = await fetch(`${gateway.url}/metrics`);
    expect(response.status).toBe(200);
    return { contentType: response.headers.get('content-type'), text: await response.text() };
  }

  it('exposes inspect decisions, audit flushes and the snapshot version, without request data', async () => {
    const before = parseSamples((await scrape()).text);

    const allowed = await gateway.inspect(inspectBody(gateway.tenant.agentId, { tool }));
    expect(allowed.status).toBe(200);
    const denied = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { tool, server: unlistedServer }),
    );
    expect(denied.status).toBe(403);
    expect(denied.body.reasonCode).toBe('MCP_SERVER_NOT_WHITELISTED');

    const { contentType, text } = await scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const after = parseSamples(text);

    const inspectCounts = after.filter(
      (s) => s.name === 'agent_gateway_inspect_duration_seconds_count',
    );
    expect(inspectCounts).toContainEqual({
      name: 'agent_gateway_inspect_duration_seconds_count',
      labels: { decision: 'allow', reason_code: 'none', mode: 'simulation' },
      value: 1,
    });
    expect(inspectCounts).toContainEqual({
      name: 'agent_gateway_inspect_duration_seconds_count',
      labels: { decision: 'deny', reason_code: 'MCP_SERVER_NOT_WHITELISTED', mode: 'simulation' },
      value: 1,
    });
    expect(
      after.some(
        (s) =>
          s.name === 'agent_gateway_inspect_duration_seconds_bucket' &&
          s.labels.decision === 'allow' &&
          s.labels.le === '+Inf' &&
          s.value === 1,
      ),
    ).toBe(true);

    // The deny was made durable by a group commit before it was answered.
    const flushes = 'agent_gateway_audit_flush_duration_seconds_count';
    expect(total(after, flushes)).toBeGreaterThan(total(before, flushes));
    const entries = 'agent_gateway_audit_entries_total';
    expect(total(after, entries)).toBeGreaterThanOrEqual(total(before, entries) + 1);

    expect(total(after, 'agent_gateway_snapshot_version')).toBeGreaterThanOrEqual(1);
    expect(
      after.find(
        (s) => s.name === 'agent_gateway_snapshot_applies_total' && s.labels.result === 'applied',
      )?.value,
    ).toBeGreaterThanOrEqual(1);

    // Label values come from closed sets: nothing a caller sent becomes a label.
    const labelValues = new Set(after.flatMap((s) => Object.values(s.labels)));
    for (const requestData of [
      tool,
      unlistedServer,
      'files',
      gateway.tenant.agentId,
      gateway.tenant.id,
      'exec-1',
    ]) {
      expect(labelValues.has(requestData), requestData).toBe(false);
    }
    expect(text).not.toContain(tool);
    expect(text).not.toContain(unlistedServer);
  });
});
