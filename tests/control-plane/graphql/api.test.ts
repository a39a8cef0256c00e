// The GraphQL API over real HTTP against a real single-process gateway, on both databases:
// every domain's queries and mutations, typed validation errors, scopes, tenant isolation, and
// that changes made through GraphQL are enforced by the data plane on the very next inspect.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { HOLD_POLICY } from '../../support/npl-policies.js';
import { errorCodes, graphql, type Loose } from './support.js';

describeEachDatabase('GraphQL API', (kind) => {
  let gw: TestGateway;
  let admin: string;
  let other: TestTenant;
  let otherAdmin: string;
  const q = <T = Record<string, Loose>>(
    query: string,
    variables?: Record<string, unknown>,
    key = admin,
  ) => graphql<T>(gw.url, key, query, variables);

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    other = await gw.addTenant();
    otherAdmin = await gw.addApiKey(
      other.id,
      [...ALL_SCOPES].filter((s) => s !== 'tenants:admin'),
    );
  });
  afterAll(() => gw?.close());

  it('me names the key, its scopes and its tenant', async () => {
    const answer = await q('{ me { apiKeyId scopes tenant { id name configVersion } } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.me.tenant.id).toBe(gw.tenant.id);
    expect(answer.data?.me.scopes).toEqual([...ALL_SCOPES].sort());
  });

  it('tenants: an admin lists and creates tenants; the new key works at once', async () => {
    const created = await q(
      'mutation($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id name } secret } }',
      { i: { name: `gq-${kind}`, initialKeyScopes: ['policies:manage'] } },
    );
    expect(created.errors).toBeUndefined();
    const { tenant, secret } = created.data!.createTenant;
    const me = await q('{ me { tenant { id } scopes } }', {}, secret);
    expect(me.data?.me).toEqual({ tenant: { id: tenant.id }, scopes: ['policies:manage'] });
    const list = await q('{ tenants { id } }');
    expect(list.data?.tenants.map((t: { id: string }) => t.id)).toContain(tenant.id);
    const refused = await q('{ tenants { id } }', {}, otherAdmin);
    expect(errorCodes(refused)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });

  it('api keys: create returns the secret once, list never shows it, revoke stops the key', async () => {
    const created = await q(
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id prefix scopes } secret } }',
      { i: { name: 'ci', scopes: ['audit:read'] } },
    );
    const { apiKey, secret } = created.data!.createApiKey;
    expect(secret).toMatch(/^agk_/);
    const listed = await q('{ apiKeys { id prefix scopes } }');
    expect(JSON.stringify(listed.data)).not.toContain(secret);
    expect(listed.data?.apiKeys).toContainEqual(apiKey);
    expect((await q('{ me { apiKeyId } }', {}, secret)).data?.me.apiKeyId).toBe(apiKey.id);
    const revoked = await q('mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }', {
      id: apiKey.id,
    });
    expect(revoked.data?.revokeApiKey.revokedAt).toBeTruthy();
    expect((await graphql(gw.url, secret, '{ me { apiKeyId } }')).status).toBe(401);
    const escalate = await q(
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }',
      { i: { name: 'x', scopes: ['tenants:admin'] } },
      otherAdmin,
    );
    expect(errorCodes(escalate)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });

  it('gateway policy: a bad change lists every wrong field and stores nothing', async () => {
    const answer = await q(
      `mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) {
        __typename ... on GatewayPolicyValidationError { code issues { field message } } } }`,
      {
        i: {
          allowedModes: ['production', 'warp'],
          maxDelegationDepth: 99,
          oauthMode: 'magic',
          approvalTtlSeconds: 1,
          exfilBulkExportLimit: 0,
          pinnedPolicies: ['not-a-uri'],
        },
      },
    );
    const result = answer.data?.updateGatewayPolicy;
    expect(result.__typename).toBe('GatewayPolicyValidationError');
    expect(result.issues.map((i: { field: string }) => i.field).sort()).toEqual(
      [
        'allowedModes[1]',
        'approvalTtlSeconds',
        'exfilBulkExportLimit',
        'maxDelegationDepth',
        'oauthMode',
        'pinnedPolicies[0]',
      ].sort(),
    );
    const policy = await q('{ gatewayPolicy { maxDelegationDepth oauthMode } }');
    expect(policy.data?.gatewayPolicy).toEqual({ maxDelegationDepth: 3, oauthMode: 'none' });
  });

  it('a gateway policy change through GraphQL is enforced on the very next inspect', async () => {
    const agentId = gw.tenant.agentId;
    await q('mutation($i: RegisterMcpServerInput!) { registerMcpServer(input: $i) { serverId } }', {
      i: { serverId: 'files', url: 'http://127.0.0.1:9/mcp', mockResults: { echo: { ok: 1 } } },
    });
    expect((await gw.inspect(inspectBody(agentId))).body.reasonCode).toBe(
      'MCP_SERVER_NOT_WHITELISTED',
    );
    const trust = (trustedServers: string[]) =>
      q(
        `mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) {
        __typename ... on MutationUpdateGatewayPolicySuccess {
          data { trustedServers } warnings { code field message } } } }`,
        { i: { trustedServers } },
      );
    // A trusted id no registered server has is stored, with a warning that names it.
    const typo = (await trust(['files', 'fiels'])).data?.updateGatewayPolicy;
    expect(typo.data.trustedServers).toEqual(['files', 'fiels']);
    expect(typo.warnings).toEqual([
      {
        code: 'TRUSTED_SERVER_NOT_REGISTERED',
        field: 'trustedServers[1]',
        message:
          'no MCP server "fiels" is registered in this tenant (registered: files): the entry is stored, and calls reach a server under this id only once one is registered (registerMcpServer)',
      },
    ]);
    const update = await trust(['files']);
    expect(update.data?.updateGatewayPolicy.data.trustedServers).toEqual(['files']);
    expect(update.data?.updateGatewayPolicy.warnings).toEqual([]);
    const allowed = await gw.inspect(inspectBody(agentId));
    expect(allowed.status).toBe(200);
    expect(allowed.body.decision).toBe('allow');
    await q('mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }', {
      i: { blockedTools: ['echo'] },
    });
    expect((await gw.inspect(inspectBody(agentId))).body.reasonCode).toBe('MCP_METHOD_BLOCKED');
    await q('mutation($i: GatewayPolicyInput!) { updateGatewayPolicy(input: $i) { __typename } }', {
      i: { blockedTools: [] },
    });
  });

  it('mcp servers: list, update and remove (NOT_FOUND for another tenant)', async () => {
    const updated = await q(
      'mutation($i: UpdateMcpServerInput!) { updateMcpServer(serverId: "files", input: $i) { url transport mockResults } }',
      { i: { url: 'http://127.0.0.1:10/mcp', mockResults: { echo: { ok: 2 } } } },
    );
    expect(updated.data?.updateMcpServer).toEqual({
      url: 'http://127.0.0.1:10/mcp',
      transport: 'STREAMABLE_HTTP',
      mockResults: { echo: { ok: 2 } },
    });
    const list = await q('{ mcpServers { serverId } }');
    expect(list.data?.mcpServers).toEqual([{ serverId: 'files' }]);
    expect((await q('{ mcpServers { serverId } }', {}, otherAdmin)).data?.mcpServers).toEqual([]);
    const foreign = await q('mutation { removeMcpServer(serverId: "files") }', {}, otherAdmin);
    expect(errorCodes(foreign)).toEqual(['NOT_FOUND']);
    await q(
      'mutation { registerMcpServer(input: { serverId: "tmp", url: "http://127.0.0.1:11/" }) { id } }',
    );
    expect((await q('mutation { removeMcpServer(serverId: "tmp") }')).data?.removeMcpServer).toBe(
      true,
    );
  });

  it('npl: a bad document returns the engine issues with paths and positions', async () => {
    const answer = await q(
      `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
        __typename ... on NplDocumentError { issues { code path line column source { line column } } } } }`,
      { i: { source: HOLD_POLICY.replace("tool.name == 'write'", 'tool.name == ') } },
    );
    const result = answer.data?.publishNplPolicy;
    expect(result.__typename).toBe('NplDocumentError');
    expect(result.issues).toContainEqual({
      code: 'condition_syntax',
      path: 'rules[0].condition',
      line: 1,
      column: expect.any(Number),
      source: { line: 7, column: expect.any(Number) },
    });
  });

  it('npl + approvals: publish, pin, a held call is approved through GraphQL and passes once', async () => {
    const published = await q(
      `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
        ... on MutationPublishNplPolicySuccess { data { uri created policyVersion { contentHash } } } } }`,
      { i: { source: HOLD_POLICY } },
    );
    expect(published.data?.publishNplPolicy.data).toMatchObject({
      uri: 'svc://hold-writes@1.0.0',
      created: true,
    });
    const versions = await q(
      '{ nplPolicyVersions { uri } nplPolicyVersion(uri: "svc://hold-writes@1.0.0") { name version } }',
    );
    expect(versions.data?.nplPolicyVersions).toEqual([{ uri: 'svc://hold-writes@1.0.0' }]);
    expect(versions.data?.nplPolicyVersion).toEqual({ name: 'hold-writes', version: '1.0.0' });
    const changed = await q(
      'mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) { __typename } }',
      { i: { source: HOLD_POLICY.replace('hold_write', 'other') } },
    );
    expect(errorCodes(changed)).toEqual(['REQUEST_INVALID']);
    const pinned = await q('mutation { pinNplPolicy(uri: "svc://hold-writes@1.0.0") }');
    expect(pinned.data?.pinNplPolicy).toEqual(['svc://hold-writes@1.0.0']);

    const call = inspectBody(gw.tenant.agentId, { tool: 'write' });
    const held = await gw.inspect(call);
    expect(held.status).toBe(202);
    const approvalId = (held.body.approval as { id: string }).id;
    const pending = await q(
      '{ approvals(status: PENDING) { edges { node { id status toolName agent { id } } } } }',
    );
    expect(pending.data?.approvals.edges.map((e: Loose) => e.node)).toEqual([
      { id: approvalId, status: 'PENDING', toolName: 'write', agent: { id: gw.tenant.agentId } },
    ]);
    const foreign = await q(
      'mutation($id: ID!) { approveApproval(id: $id) { id } }',
      { id: approvalId },
      otherAdmin,
    );
    expect(errorCodes(foreign)).toEqual(['APPROVAL_NOT_FOUND']);
    const approved = await q(
      'mutation($id: ID!) { approveApproval(id: $id, reason: "looks fine") { status decidedBy decisionReason } }',
      { id: approvalId },
    );
    expect(approved.data?.approveApproval).toMatchObject({
      status: 'APPROVED',
      decisionReason: 'looks fine',
    });
    const again = await q('mutation($id: ID!) { rejectApproval(id: $id) { id } }', {
      id: approvalId,
    });
    expect(errorCodes(again)).toEqual(['REQUEST_INVALID']);
    const passed = await gw.inspect(inspectBody(gw.tenant.agentId, { tool: 'write', approvalId }));
    expect(passed.status).toBe(200);
    const trail = await q(
      '{ auditTrail(action: "approval.approved") { edges { node { resourceId metadata } } } }',
    );
    expect(trail.data?.auditTrail.edges[0].node).toMatchObject({
      resourceId: approvalId,
      metadata: {
        decision: 'approved',
        reason: 'looks fine',
        decidedBy: approved.data?.approveApproval.decidedBy,
      },
    });
    const unpinned = await q('mutation { unpinNplPolicy(uri: "svc://hold-writes@1.0.0") }');
    expect(unpinned.data?.unpinNplPolicy).toEqual([]);
  });

  it('npl: a policy with an always-false comparison publishes with its warning and never matches through it', async () => {
    const source = `policyName: text-guard
version: 1.0.0
targetAgents: ['*']
rules:
  - ruleId: block_after_z
    action: BLOCK
    condition: "tool.name == 'echo' && args.text > 'zzz'"
    alertSeverity: CRITICAL
  - ruleId: block_marked
    action: BLOCK
    condition: "args.text == 'block-me'"
    alertSeverity: CRITICAL
`;
    const publish = () =>
      q(
        `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
          ... on MutationPublishNplPolicySuccess { data { uri created
            warnings { code message path hint ruleIndex line column excerpt source { line column } } } } } }`,
        { i: { source } },
      );
    const warning = {
      code: 'always_false',
      message: "> compares numbers, and 'zzz' is not a number: always false",
      path: 'rules[0].condition',
      hint: 'use == or a string method for text',
      ruleIndex: 0,
      line: 1,
      column: 36,
      excerpt: "tool.name == 'echo' && args.text > 'zzz'\n                                   ^",
      source: { line: 7, column: 52 },
    };
    const first = await publish();
    expect(first.errors).toBeUndefined();
    expect(first.data?.publishNplPolicy.data).toEqual({
      uri: 'svc://text-guard@1.0.0',
      created: true,
      warnings: [warning],
    });
    const again = await publish();
    expect(again.data?.publishNplPolicy.data).toMatchObject({
      created: false,
      warnings: [warning],
    });
    const clean = await q(
      `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
        ... on MutationPublishNplPolicySuccess { data { warnings { code } } } } }`,
      { i: { source: HOLD_POLICY.replace('hold-writes', 'clean-policy') } },
    );
    expect(clean.data?.publishNplPolicy.data).toEqual({ warnings: [] });

    // Enforced: the second rule blocks, the always-false one lets every value through.
    await q('mutation { pinNplPolicy(uri: "svc://text-guard@1.0.0") }');
    const agent = gw.tenant.agentId;
    for (const args of [{ text: 'zzzz' }, { text: 'hello' }, { text: 99_999 }, {}]) {
      const answer = await gw.inspect(inspectBody(agent, { args }));
      expect(answer.status, JSON.stringify(args)).toBe(200);
    }
    const marked = await gw.inspect(inspectBody(agent, { args: { text: 'block-me' } }));
    expect(marked.body).toMatchObject({ decision: 'deny', reasonCode: 'NPL_POLICY_BLOCK' });
    await q('mutation { unpinNplPolicy(uri: "svc://text-guard@1.0.0") }');
  });

  it('npl: pinning 1.0.1 with replaces swaps it for 1.0.0 in one change, and the relaxed rule decides at once', async () => {
    const guard = (version: string, limit: number) => `policyName: transfer-guard
version: ${version}
targetAgents: ['*']
rules:
  - ruleId: block_large_transfer
    action: BLOCK
    condition: "tool.name == 'wire_transfer' && args.amount > ${limit}"
    alertSeverity: MEDIUM
`;
    for (const source of [guard('1.0.0', 100), guard('1.0.1', 1000)]) {
      const published = await q(
        'mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) { __typename } }',
        { i: { source } },
      );
      expect(published.data?.publishNplPolicy.__typename).toBe('MutationPublishNplPolicySuccess');
    }
    await gw.setPolicy(gw.tenant.id, { trustedServers: ['files'] });
    const [old, relaxed] = ['svc://transfer-guard@1.0.0', 'svc://transfer-guard@1.0.1'];
    const other = 'svc://nato-prou-strict-financial@1.0.0';
    const pin = (uri: string, replaces?: string) =>
      q(
        'mutation($uri: String!, $replaces: String) { pinNplPolicy(uri: $uri, replaces: $replaces) }',
        {
          uri,
          replaces,
        },
      );
    expect((await pin(old)).data?.pinNplPolicy).toEqual([old]);
    const transfer = inspectBody(gw.tenant.agentId, {
      tool: 'wire_transfer',
      args: { amount: 500 },
    });
    expect((await gw.inspect(transfer)).body).toMatchObject({ decision: 'deny', policy: old });

    // Every snapshot the data plane applies, and every audit entry, while a mutation runs.
    const duringMutation = async (run: () => Promise<unknown>) => {
      const snapshots: (readonly string[])[] = [];
      const stop = gw.runtime.store.onApply((snapshot) => {
        const tenant = snapshot.tenants.get(gw.tenant.id);
        snapshots.push(tenant?.pinnedPolicies.map((policy) => policy.uri) ?? []);
      });
      const tenantId = gw.tenant.id;
      await gw.runtime.audit.flush();
      const last = await gw.db.prisma.auditEntry.findFirst({
        where: { tenantId },
        orderBy: { seq: 'desc' },
        select: { seq: true },
      });
      await run();
      stop();
      await gw.runtime.audit.flush();
      const entries = await gw.db.prisma.auditEntry.findMany({
        where: { tenantId, seq: { gt: last?.seq ?? 0n } },
        select: { action: true, resourceId: true, metadata: true },
      });
      return { snapshots, entries };
    };

    // Refusals, each with its code, changing nothing: no entry, no snapshot, the same pins.
    const refusals: [() => ReturnType<typeof pin>, string, string][] = [
      [() => pin(relaxed, 'svc://transfer-guard@0.9.0'), 'NPL_PIN_REPLACES_NOT_PINNED', ''],
      [() => pin(old, old), 'NPL_PIN_ALREADY_PINNED', ''],
      [() => pin(relaxed, other), 'REQUEST_INVALID', 'replaces'],
      [() => pin(relaxed, 'not-a-uri'), 'REQUEST_INVALID', 'replaces'],
    ];
    for (const [refused, code, field] of refusals) {
      let answer: Awaited<ReturnType<typeof pin>> | undefined;
      const { snapshots, entries } = await duringMutation(async () => {
        answer = await refused();
      });
      expect(errorCodes(answer!), code).toEqual([code]);
      if (field) expect(answer!.errors?.[0]?.extensions?.issues).toMatchObject([{ field }]);
      expect({ snapshots, entries }).toEqual({ snapshots: [], entries: [] });
    }
    expect((await q('{ gatewayPolicy { pinnedPolicies } }')).data?.gatewayPolicy).toEqual({
      pinnedPolicies: [old],
    });

    const { snapshots, entries } = await duringMutation(async () => {
      expect((await pin(relaxed, old)).data?.pinNplPolicy).toEqual([relaxed]);
    });
    expect(snapshots).toEqual([[relaxed]]);
    expect(entries).toEqual([
      {
        action: 'npl_policy.pinned',
        resourceId: relaxed,
        metadata: expect.objectContaining({ replaced: old }),
      },
    ]);
    // The answer left after the snapshot was applied: the very next inspect follows 1.0.1.
    expect((await gw.inspect(transfer)).body.decision).toBe('allow');
    const large = inspectBody(gw.tenant.agentId, { tool: 'wire_transfer', args: { amount: 5000 } });
    expect((await gw.inspect(large)).body).toMatchObject({ decision: 'deny', policy: relaxed });

    // Without replaces, a pin is added beside the others, as before.
    expect((await pin(old)).data?.pinNplPolicy).toEqual([relaxed, old]);
    expect((await gw.inspect(transfer)).body).toMatchObject({ decision: 'deny', policy: old });
    for (const uri of [relaxed, old]) {
      await q('mutation($uri: String!) { unpinNplPolicy(uri: $uri) }', { uri });
    }
  });

  it('npl: a version identical to the previous one but for its number publishes with same_as_previous, previewed before', async () => {
    const guard = (version: string, tool: string) => `# a comment and a layout of its own
policyName: same-guard
version: "${version}"
targetAgents: ['*']
rules:
  - ruleId: block_tool
    action: BLOCK
    condition: "tool.name == '${tool}'"
    alertSeverity: LOW
`;
    const fields = `uri created warnings { code message path hint source { line column } }`;
    const preview = (source: string) =>
      q(
        `query($i: PublishNplPolicyInput!) { nplPublishPreview(input: $i) {
          ... on QueryNplPublishPreviewSuccess { data { ${fields} } } } }`,
        { i: { source } },
      );
    const publish = (source: string) =>
      q(
        `mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) {
          ... on MutationPublishNplPolicySuccess { data { ${fields} } } } }`,
        { i: { source } },
      );
    expect((await publish(guard('1.0.0', 'drop'))).data?.publishNplPolicy.data.warnings).toEqual(
      [],
    );
    const warning = {
      code: 'same_as_previous',
      message:
        'svc://same-guard@1.0.1 is identical to svc://same-guard@1.0.0 apart from its version: it changes no rule',
      path: 'version',
      hint: 'edit the rules before publishing, or keep svc://same-guard@1.0.0, which decides the same',
      source: { line: 3, column: 10 },
    };
    const unchanged = guard('1.0.1', 'drop').replace('# a comment and a layout of its own\n', '');
    const before = await preview(unchanged);
    expect(before.data?.nplPublishPreview.data).toEqual({
      uri: 'svc://same-guard@1.0.1',
      created: true,
      warnings: [{ ...warning, source: { line: 2, column: 10 } }],
    });
    // The preview published nothing; the publication answers the same warning.
    expect((await q('{ nplPolicyVersions(name: "same-guard") { version } }')).data).toEqual({
      nplPolicyVersions: [{ version: '1.0.0' }],
    });
    expect((await publish(guard('1.0.1', 'drop'))).data?.publishNplPolicy.data).toEqual({
      uri: 'svc://same-guard@1.0.1',
      created: true,
      warnings: [warning],
    });
    // A changed rule, and a later version bringing back older rules (a rollback), are meant.
    for (const [version, tool] of [
      ['1.0.2', 'delete'],
      ['1.0.3', 'drop'],
    ] as const) {
      const changed = await preview(guard(version, tool));
      expect(changed.data?.nplPublishPreview.data).toMatchObject({ created: true, warnings: [] });
      await publish(guard(version, tool));
    }
  });

  it('agents: create, list as a connection, read, update; isolated per tenant', async () => {
    const created = await q(
      'mutation($i: CreateAgentInput!) { createAgent(input: $i) { id role allowedTools } }',
      {
        i: {
          name: 'writer',
          publicKey: newAgentPublicKey(),
          role: 'writer',
          allowedTools: ['write'],
        },
      },
    );
    const id = created.data?.createAgent.id;
    expect(created.data?.createAgent).toMatchObject({ role: 'writer', allowedTools: ['write'] });
    const updated = await q(
      'mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { role allowedTools personaTone } }',
      { id, i: { role: 'reviewer', allowedTools: ['read'], personaTone: 'terse' } },
    );
    expect(updated.data?.updateAgent).toEqual({
      role: 'reviewer',
      allowedTools: ['read'],
      personaTone: 'terse',
    });
    const page = await q(
      '{ agents(first: 1) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }',
    );
    expect(page.data?.agents.edges).toHaveLength(1);
    expect(page.data?.agents.pageInfo.hasNextPage).toBe(true);
    const own = await q('{ agents(first: 50) { edges { node { id } } } }', {}, otherAdmin);
    expect(own.data?.agents.edges.map((e: Loose) => e.node.id)).toEqual([other.agentId]);
    expect(
      (await q('query($id: ID!) { agent(id: $id) { id } }', { id }, otherAdmin)).data?.agent,
    ).toBeNull();
    const foreign = await q(
      'mutation($id: ID!) { updateAgent(id: $id, input: { role: "x" }) { id } }',
      { id },
      otherAdmin,
    );
    expect(errorCodes(foreign)).toEqual(['NOT_FOUND']);
  });

  it('audit trail: filters by action, agent, decision and time; verify checks the chain', async () => {
    await gw.setPolicy(gw.tenant.id, { trustedServers: [] });
    const denied = await gw.inspect(inspectBody(gw.tenant.agentId));
    expect(denied.status).toBe(403);
    const deny = await q(
      'query($a: ID) { auditTrail(decision: "deny", agentId: $a, first: 5) { edges { node { action resourceId seq } } } }',
      { a: gw.tenant.agentId },
    );
    expect(deny.data?.auditTrail.edges.length).toBeGreaterThan(0);
    for (const edge of deny.data?.auditTrail.edges ?? []) {
      expect(edge.node).toMatchObject({ action: 'inspect.deny', resourceId: gw.tenant.agentId });
    }
    const future = await q(
      '{ auditTrail(from: "2999-01-01T00:00:00Z") { edges { node { id } } } }',
    );
    expect(future.data?.auditTrail.edges).toEqual([]);
    const verified = await q('{ verifyAuditTrail { ok count partial head } }');
    expect(verified.data?.verifyAuditTrail).toMatchObject({ ok: true, partial: false });
    expect(verified.data?.verifyAuditTrail.count).toBeGreaterThan(3);
    const foreign = await q('{ auditTrail { edges { node { resourceId } } } }', {}, otherAdmin);
    expect(JSON.stringify(foreign.data)).not.toContain(gw.tenant.agentId);
  });

  it("audit trail: names each entry's agent, actor and resource, within the tenant only", async () => {
    const named = await q('{ me { apiKeyId } }');
    const adminKeyId = named.data?.me.apiKeyId as string;
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'names',
      url: 'http://127.0.0.1:9/mcp',
    });
    const created = await q('mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }', {
      i: {
        name: `twin-${kind}`,
        publicKey: newAgentPublicKey(),
        allowedTools: ['*'],
        mcpAudiences: ['mcp://names'],
      },
    });
    const twinA = created.data?.createAgent.id as string;
    const twinB = await gw.addAgent(gw.tenant.id, { name: `Twin-${kind}` });
    const otherAgent = await q(
      'query($id: ID!) { agent(id: $id) { name } }',
      { id: other.agentId },
      otherAdmin,
    );
    const otherName = otherAgent.data?.agent.name as string;
    // An operator's key and an OAuth client, both named and audited with their ids.
    const key = await q(
      'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id } } }',
      { i: { name: 'nightly-export', scopes: ['audit:read'] } },
    );
    const keyId = key.data?.createApiKey.apiKey.id as string;
    const client = await q(
      'mutation($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { client { id } } }',
      { i: { agentId: twinA, clientName: 'twin-a-client' } },
    );
    expect(client.errors).toBeUndefined();
    const clientId = client.data?.registerOAuthClient.client.id as string;
    // Denies of both twins, and one naming the other tenant's agent (AGENT_UNKNOWN here).
    await gw.setPolicy(gw.tenant.id, { trustedServers: [] });
    for (const agent of [twinA, twinB]) {
      expect((await gw.inspect(inspectBody(agent))).status).toBe(403);
    }
    const foreign = await gw.inspect(inspectBody(other.agentId));
    expect(foreign.body.reasonCode).toBe('AGENT_UNKNOWN');

    const FIELDS =
      '{ action resourceId resourceName agent { kind id name } actor { kind id name } }';
    // Every SQL statement the gateway sends while it answers (pg is the driver of both databases).
    const query = vi.spyOn(pg.Client.prototype, 'query');
    const trail = await q(`query($n: Int) { auditTrail(first: $n) { edges { node ${FIELDS} } } }`, {
      n: 100,
    });
    const statements = query.mock.calls.map(([config]) =>
      typeof config === 'string' ? config : String((config as { text?: string }).text),
    );
    query.mockRestore();
    // One read of each named kind for the whole page, not one per entry.
    for (const table of ['agents', 'api_keys', 'oauth_clients']) {
      // In any schema: a PostgreSQL run uses one of its own.
      const read = new RegExp(`FROM "[a-z0-9_]+"\\."${table}" WHERE`);
      const reads = statements.filter((sql) => read.test(sql));
      expect(reads, table).toHaveLength(1);
    }
    expect(trail.errors).toBeUndefined();
    const nodes = trail.data?.auditTrail.edges.map((edge: Loose) => edge.node) as Loose[];
    const byResource = (id: string) => nodes.find((node) => node.resourceId === id);
    const admin = { kind: 'api_key', id: adminKeyId, name: 'test' };
    expect(byResource(keyId)).toMatchObject({
      action: 'api_key.created',
      resourceName: 'nightly-export',
      actor: admin,
    });
    expect(byResource(clientId)).toMatchObject({
      action: 'oauth.client_registered',
      resourceName: 'twin-a-client',
      agent: { kind: 'agent', id: twinA, name: `twin-${kind}` },
      actor: admin,
    });
    expect(byResource(twinB)).toMatchObject({
      action: 'inspect.deny',
      resourceName: `Twin-${kind}`,
      agent: { kind: 'agent', id: twinB, name: `Twin-${kind}` },
      actor: { kind: 'agent', id: twinB, name: `Twin-${kind}` },
    });
    // The other tenant's agent is an id here: its name never shows.
    expect(byResource(other.agentId)).toMatchObject({
      resourceName: null,
      agent: { kind: 'agent', id: other.agentId, name: null },
    });
    expect(JSON.stringify(nodes)).not.toContain(otherName);

    // The agent filter takes a name (case-insensitive; both twins share it) or an id.
    const byAgent = async (agent: string) => {
      const answer = await q(
        'query($a: String) { auditTrail(agent: $a) { edges { node { resourceId } } } }',
        { a: agent },
      );
      expect(answer.errors).toBeUndefined();
      return new Set(answer.data?.auditTrail.edges.map((edge: Loose) => edge.node.resourceId));
    };
    expect(await byAgent(`TWIN-${kind}`)).toEqual(new Set([twinA, twinB]));
    expect(await byAgent(twinB)).toEqual(new Set([twinB]));
    expect(await byAgent(other.agentId)).toEqual(new Set([other.agentId]));
    expect(await byAgent(otherName)).toEqual(new Set());

    // The filter's choices: this tenant's agents, with names; never the other tenant's.
    const choices = await q('{ auditAgents(search: "twin") { kind id name } }');
    expect(choices.data?.auditAgents).toEqual(
      expect.arrayContaining([
        { kind: 'agent', id: twinA, name: `twin-${kind}` },
        { kind: 'agent', id: twinB, name: `Twin-${kind}` },
      ]),
    );
    expect(choices.data?.auditAgents).toHaveLength(2);
    const all = await q('{ auditAgents(first: 100) { id } }');
    expect(all.data?.auditAgents.map((agent: Loose) => agent.id)).not.toContain(other.agentId);
    const auditor = await gw.addApiKey(gw.tenant.id, ['audit:read']);
    expect((await q('{ auditAgents { id } }', {}, auditor)).errors).toBeUndefined();
    expect(errorCodes(await q('{ auditAgents { id } }', {}, gw.tenant.key))).toEqual([
      'AUTH_INSUFFICIENT_SCOPE',
    ]);
  });

  it('data planes: listed for tenants:admin only', async () => {
    expect((await q('{ dataPlanes { id name } }')).data?.dataPlanes).toEqual([]);
    expect(errorCodes(await q('{ dataPlanes { id } }', {}, otherAdmin))).toEqual([
      'AUTH_INSUFFICIENT_SCOPE',
    ]);
  });
});

describe('GraphQL API security', () => {
  let gw: TestGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('answers 401 without a valid API key, before GraphQL runs', async () => {
    for (const key of [undefined, 'agk_nope_nope']) {
      const answer = await fetch(`${gw.url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        body: JSON.stringify({ query: '{ me { apiKeyId } }' }),
      });
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { reasonCode: string }).reasonCode).toBe(
        'AUTH_INVALID_API_KEY',
      );
    }
  });

  it('an agents:execute key can neither read nor change the policy', async () => {
    const read = await graphql(gw.url, gw.tenant.key, '{ gatewayPolicy { trustedServers } }');
    expect(errorCodes(read)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
    expect(read.errors?.[0]?.message).toContain('policies:manage');
    const write = await graphql(
      gw.url,
      gw.tenant.key,
      'mutation { updateGatewayPolicy(input: { trustedServers: ["x"] }) { __typename } }',
    );
    expect(errorCodes(write)).toEqual(['AUTH_INSUFFICIENT_SCOPE']);
  });

  it('CSRF: a POST with text/plain, or a GET without the header, is refused', async () => {
    const plain = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ query: 'mutation { removeMcpServer(serverId: "x") }' }),
    });
    expect(plain.status).toBe(403);
    const get = await graphql(gw.url, admin, '{ me { apiKeyId } }', {}, { method: 'GET' });
    expect(get.status).toBe(403);
    const withHeader = await graphql(
      gw.url,
      admin,
      '{ me { apiKeyId } }',
      {},
      {
        method: 'GET',
        headers: { 'x-agent-gateway-csrf': '1' },
      },
    );
    expect(withHeader.status).toBe(200);
  });

  it("a browser opening /graphql is sent to the console's GraphiQL; API clients are answered as before", async () => {
    const navigation =
      'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
    const open = (accept: string, search = '', init: RequestInit = {}) =>
      fetch(`${gw.url}/graphql${search}`, {
        redirect: 'manual',
        ...init,
        headers: { accept, ...(init.headers as Record<string, string>) },
      });

    const page = await open(navigation);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/console/graphiql');
    expect(page.headers.get('vary')).toMatch(/accept/i);
    const search = `?query=${encodeURIComponent('{ me { apiKeyId } }')}`;
    const withQuery = await open('text/html', search);
    expect(withQuery.headers.get('location')).toBe(`/console/graphiql${search}`);

    // Unchanged: no key is a 401, whatever else is accepted beside a JSON type.
    for (const accept of ['application/json', 'text/html, application/json', '*/*']) {
      const refused = await open(accept);
      expect(refused.status, accept).toBe(401);
      expect(((await refused.json()) as { reasonCode: string }).reasonCode).toBe(
        'AUTH_INVALID_API_KEY',
      );
    }
    const keyed = { authorization: `Bearer ${admin}`, 'x-agent-gateway-csrf': '1' };
    for (const accept of [
      'application/json',
      'application/graphql-response+json',
      'text/html;q=0.9, application/graphql-response+json',
    ]) {
      const answer = await open(accept, search, { headers: keyed });
      expect(answer.status, accept).toBe(200);
      expect(((await answer.json()) as { data: unknown }).data).toEqual({
        me: { apiKeyId: expect.any(String) },
      });
    }
    // A POST is never a page, and HTML refused with q=0 is no navigation.
    const post = await open(navigation, '', {
      method: 'POST',
      headers: { ...keyed, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { apiKeyId } }' }),
    });
    expect(post.status).toBe(200);
    expect(((await post.json()) as { data: unknown }).data).toEqual({
      me: { apiKeyId: expect.any(String) },
    });
    expect((await open('text/html;q=0, application/json')).status).toBe(401);
  });

  it('refuses an absurdly deep query', async () => {
    const deep = `{ agents { edges { node { ${'parent { '.repeat(30)}id${' }'.repeat(30)} } } } }`;
    const answer = await graphql(gw.url, admin, deep);
    expect(answer.data ?? null).toBeNull();
    expect(answer.errors?.[0]?.message).toMatch(/depth/i);
  });

  it('masks unexpected errors and does not leak internals', async () => {
    const answer = await graphql(
      gw.url,
      admin,
      '{ auditTrail(first: 5, after: "bogus") { edges { node { id } } } }',
    );
    const text = JSON.stringify(answer);
    expect(text).not.toMatch(/prisma|stack|at .*\.ts/i);
    expect(answer.errors?.length).toBeGreaterThan(0);
  });
});
