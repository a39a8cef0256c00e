// The Overview in Chromium against a real gateway: decisions made through inspect are counted by
// the data plane (allows too) and shown per outcome — a malformed request as a client error, not
// as a policy deny — with the top denied tool and reason code, the pending approval, and an
// explanation where the key lacks a scope.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inspectBody } from '../support/gateway.js';
import {
  type ConsoleBrowser,
  type ConsoleGateway,
  describeInBrowser,
  launchConsoleBrowser,
  signIn,
  startConsoleGateway,
} from './support.js';

const HOLD_WIRES = `version: "1.0.0"
policyName: overview-guard
targetAgents: ["*"]
rules:
  - ruleId: wires_need_a_human
    action: REQUIRE_HUMAN
    condition: tool.name == 'wire'
    alertSeverity: MEDIUM
`;

describeInBrowser('operator console: overview', () => {
  let gateway: ConsoleGateway;
  let browser: ConsoleBrowser;

  beforeAll(async () => {
    gateway = await startConsoleGateway();
    browser = await launchConsoleBrowser();
    const tenant = gateway.tenant;
    const uri = await gateway.publishPolicy(tenant.id, HOLD_WIRES);
    await gateway.setPolicy(tenant.id, {
      trustedServers: ['files'],
      blockedTools: ['drop_table'],
      pinnedPolicies: [uri],
    });
    for (let i = 0; i < 3; i++) {
      expect((await gateway.inspect(inspectBody(tenant.agentId))).status).toBe(200);
    }
    for (let i = 0; i < 2; i++) {
      const denied = await gateway.inspect(inspectBody(tenant.agentId, { tool: 'drop_table' }));
      expect(denied.body.reasonCode).toBe('MCP_METHOD_BLOCKED');
    }
    const held = await gateway.inspect(inspectBody(tenant.agentId, { tool: 'wire' }));
    expect(held.status).toBe(202);
    const malformed = await gateway.inspect({ agent_id: tenant.agentId });
    expect(malformed.body.reasonCode).toBe('MCP_MALFORMED_RPC');
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('shows the decisions per outcome, client errors apart, the top denied tool and reason, and the pending approval', async () => {
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, gateway.consoleKey);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const count = (label: string) => page.getByLabel(label);
    await count('Allowed in the window').waitFor();
    expect(await count('Allowed in the window').textContent()).toBe('3');
    expect(await count('Denied in the window').textContent()).toBe('2');
    expect(await count('Client errors in the window').textContent()).toBe('1');
    expect(await count('Held for approval in the window').textContent()).toBe('1');
    const tools = page.getByRole('table', { name: 'Top denied tools' });
    await tools.getByText('drop_table').waitFor();
    await tools.getByText('on files').waitFor();
    const reasons = page.getByRole('table', { name: 'Top reason codes' });
    await reasons.getByText('MCP_METHOD_BLOCKED').waitFor();
    await reasons.getByText('NPL_REQUIRE_HUMAN').waitFor();
    await reasons.getByText('MCP_MALFORMED_RPC').waitFor();
    // The chart's legend names the client errors' series.
    const legend = page.locator('.recharts-legend-wrapper');
    await legend.getByText('Client errors', { exact: true }).waitFor();
    await legend.getByText('Denied', { exact: true }).waitFor();
    expect(await count('Pending approvals count').textContent()).toBe('1');
    await page.getByText('wire', { exact: true }).waitFor();
    await page.getByText(/Reported by .*\(in-process\)/).waitFor();
    expect(errors).toEqual([]);
  });

  it('explains what a key without audit:read cannot see', async () => {
    const key = await gateway.addApiKey(gateway.tenant.id, ['agents:execute']);
    const { page, errors } = await browser.newPage();
    await signIn(page, gateway.url, key);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByText('lacks the audit:read scope').waitFor();
    await page.getByText('needs the approvals:decide or audit:read scope').waitFor();
    expect(errors).toEqual([]);
  });
});
