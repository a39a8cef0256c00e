// Transparency of the MCP proxy, measured with the official MCP conformance suite: every server
// scenario that passes against the reference server directly also passes through
// /mcp/{serverId}, for an agent permitted all the server's tools (issue 14, "Proof"). The direct
// baseline keeps the suite and the reference server honest.
// The CLI cannot send headers, so the proxy's credentials (an agents:execute API key and
// X-Agent-Id) are added by a loopback relay that changes nothing else (tests/support/conformance.ts).
// The requirement sets of the suite's 0.2 line, both eras, run in conformance-eras.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConformanceUpstream,
  runServerScenarios,
  type ScenarioResult,
  startConformanceGateway,
  startConformanceUpstream,
} from '../support/conformance.js';
import type { TestGateway } from '../support/gateway.js';

const SERVER_ID = 'everything';

/** Scenario names with their detail, for readable failures. */
function failed(results: Map<string, ScenarioResult>): string[] {
  return [...results].filter(([, r]) => !r.passed).map(([name, r]) => `${name}: ${r.detail}`);
}

describe('the conformance suite through /mcp/{serverId}', () => {
  let upstream: ConformanceUpstream;
  let gateway: TestGateway;
  let headers: Record<string, string>;
  let direct: Map<string, ScenarioResult>;
  beforeAll(async () => {
    upstream = await startConformanceUpstream();
    direct = await runServerScenarios(upstream.url);
    ({ gateway, headers } = await startConformanceGateway(upstream.url, SERVER_ID));
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('passes every server scenario against its reference server directly', () => {
    // The suite's server scenarios (active and pending) of 0.1.13; a new version may add some.
    expect(direct.size).toBeGreaterThanOrEqual(32);
    expect(failed(direct)).toEqual([]);
  });

  it('passes every scenario that passes against the upstream directly', async () => {
    const proxied = await runServerScenarios(`${gateway.url}/mcp/${SERVER_ID}`, { headers });
    const lost = [...direct]
      .filter(([name, r]) => r.passed && !proxied.get(name)?.passed)
      .map(([name]) => `${name}: ${proxied.get(name)?.detail ?? 'not run through the proxy'}`);
    expect(lost).toEqual([]);
  }, 240_000);
});
