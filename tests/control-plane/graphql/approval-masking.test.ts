// Approval.maskedArguments over real HTTP against a real single-process gateway, on both
// databases: a held call's secret is masked with the detector's kind, `arguments` keeps it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { HOLD_POLICY } from '../../support/npl-policies.js';
import { graphql, type Loose } from './support.js';

// Assembled at run time so that secret scanners do not flag this file.
const TOKEN = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');

describeEachDatabase('Approval.maskedArguments', (kind) => {
  let gw: TestGateway;
  let admin: string;
  const q = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    // The call must reach the NPL hold: with the secret scan on it would be denied first.
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { write: { ok: 1 } },
    });
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'], exfilDetectSecrets: false });
    const uri = await gw.publishPolicy(gw.tenant.id, HOLD_POLICY);
    const pinned = await q('mutation($uri: String!) { pinNplPolicy(uri: $uri) }', { uri });
    expect(pinned.errors).toBeUndefined();
  });
  afterAll(() => gw?.close());

  it('masks the token of a held call and leaves arguments unchanged', async () => {
    const args = { repo: 'acme/web', auth: { token: TOKEN }, notes: [`push with ${TOKEN}`, 'ok'] };
    const held = await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'write', args }));
    expect(held.status).toBe(202);
    const id = (held.body.approval as { id: string }).id;
    const answer = await q('query($id: ID!) { approval(id: $id) { arguments maskedArguments } }', {
      id,
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.approval.arguments).toEqual(args);
    expect(answer.data?.approval.maskedArguments).toEqual({
      repo: 'acme/web',
      auth: { token: '[secret: GitHub token]' },
      notes: ['push with [secret: GitHub token]', 'ok'],
    });
    expect(JSON.stringify(answer.data?.approval.maskedArguments)).not.toContain(TOKEN);
  });

  it('lets an auditor (audit:read) read the queue masked, but not the raw arguments, and not decide', async () => {
    const args = { auth: { token: TOKEN } };
    const held = await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'write', args }));
    expect(held.status).toBe(202);
    const id = (held.body.approval as { id: string }).id;
    const auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
    const asAuditor = (query: string, variables?: Record<string, unknown>) =>
      graphql<Record<string, Loose>>(gw.url, auditor, query, variables);

    const listed = await asAuditor(
      '{ approvals(status: PENDING) { edges { node { id maskedArguments } } } }',
    );
    expect(listed.errors).toBeUndefined();
    const node = listed.data?.approvals.edges.find((edge: Loose) => edge.node.id === id)?.node;
    expect(node?.maskedArguments).toEqual({ auth: { token: '[secret: GitHub token]' } });

    const raw = await asAuditor('query($id: ID!) { approval(id: $id) { arguments } }', { id });
    expect(raw.errors?.[0]?.extensions?.code).toBe('AUTH_INSUFFICIENT_SCOPE');
    expect(JSON.stringify(raw)).not.toContain(TOKEN);

    const decided = await asAuditor('mutation($id: ID!) { approveApproval(id: $id) { status } }', {
      id,
    });
    expect(decided.errors?.[0]?.extensions?.code).toBe('AUTH_INSUFFICIENT_SCOPE');
    const after = await q('query($id: ID!) { approval(id: $id) { status } }', { id });
    expect(after.data?.approval.status).toBe('PENDING');

    const stranger = await gw.addApiKey(gw.tenant.id, ['agents:manage']);
    const refused = await graphql<Record<string, Loose>>(
      gw.url,
      stranger,
      '{ approvals { edges { node { id } } } }',
    );
    expect(refused.errors?.[0]?.extensions?.code).toBe('AUTH_INSUFFICIENT_SCOPE');
    expect(refused.errors?.[0]?.message).toContain('approvals:decide or audit:read');
  });
});
