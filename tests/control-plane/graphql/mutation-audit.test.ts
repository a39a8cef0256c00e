// What each configuration mutation leaves in the audit trail, pinned entry by entry: action,
// resource and metadata with the operator as actor, one entry per change and none for a refusal
// or a change that changes nothing. The services write these entries (control-plane/services/);
// the resolvers only map input and output, so this is what moving the writes must not change.
// Over real HTTP against a real single-process gateway, on both databases. Approving a tool
// definition and refusing a forbidden server URL are pinned beside their features
// (tests/tool-pinning/pinning.test.ts, tests/data-plane/upstream/egress.test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_SCOPES, SCOPES } from '../../../shared/identity/scopes.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { errorCodes, graphql, type Loose } from './support.js';

const POLICY = `policyName: audited
version: 1.0.0
targetAgents: ['*']
rules:
  - ruleId: block_drop
    action: BLOCK
    condition: "tool.name == 'drop_table'"
    alertSeverity: LOW
`;

describeEachDatabase('audit entries of configuration mutations', (kind) => {
  let gw: TestGateway;
  let admin: string;
  let actor: string;
  const q = (query: string, variables?: Record<string, unknown>) =>
    graphql<Record<string, Loose>>(gw.url, admin, query, variables);

  /** The entries of the tenant appended while `change` ran, oldest first. */
  async function entriesOf(change: () => Promise<unknown>, tenantId = gw.tenant.id) {
    const last = await gw.db.prisma.auditEntry.findFirst({
      where: { tenantId },
      orderBy: { seq: 'desc' },
      select: { seq: true },
    });
    await change();
    await gw.runtime.audit.flush();
    const rows = await gw.db.prisma.auditEntry.findMany({
      where: { tenantId, seq: { gt: last?.seq ?? -1n } },
      orderBy: { seq: 'asc' },
      select: { action: true, resourceType: true, resourceId: true, metadata: true },
    });
    return rows.map(withoutWriterFields);
  }

  /** An entry as its service appended it: without what the audit writer adds to every one. */
  function withoutWriterFields<Row extends { metadata: unknown }>(row: Row): Row {
    const {
      hashVersion: _hashVersion,
      writtenBy: _writtenBy,
      ...metadata
    } = row.metadata as Record<string, unknown>;
    return { ...row, metadata };
  }

  /** Runs a mutation, expects no error, answers its data. */
  async function ok(query: string, variables?: Record<string, unknown>) {
    const answer = await q(query, variables);
    expect(answer.errors).toBeUndefined();
    return answer.data as Record<string, Loose>;
  }

  beforeAll(async () => {
    gw = await startTestGateway(kind);
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    actor = `api_key:${(await q('{ me { apiKeyId } }')).data?.me.apiKeyId}`;
  });
  afterAll(() => gw?.close());

  it('createTenant: tenant.created in the new tenant, naming the creating tenant and first key', async () => {
    const before = await gw.db.prisma.auditEntry.count();
    const created = (
      await ok(
        'mutation($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id } apiKeyId } }',
        { i: { name: `audited-${kind}` } },
      )
    ).createTenant;
    await gw.runtime.audit.flush();
    expect(await gw.db.prisma.auditEntry.count()).toBe(before + 1);
    const rows = await gw.db.prisma.auditEntry.findMany({
      where: { tenantId: created.tenant.id },
      select: { action: true, resourceType: true, resourceId: true, metadata: true },
    });
    expect(rows.map(withoutWriterFields)).toEqual([
      {
        action: 'tenant.created',
        resourceType: 'tenant',
        resourceId: created.tenant.id,
        metadata: {
          actorType: 'operator',
          actor,
          name: `audited-${kind}`,
          byTenant: gw.tenant.id,
          initialKeyId: created.apiKeyId,
        },
      },
    ]);
    const key = await gw.db.prisma.apiKey.findUniqueOrThrow({ where: { id: created.apiKeyId } });
    expect(key.createdBy).toBe(`tenant ${gw.tenant.name} ${actor}`);
    expect([...key.scopes].sort()).toEqual(
      ALL_SCOPES.filter((scope) => scope !== SCOPES.TENANTS_ADMIN).sort(),
    );
  });

  it('createApiKey and revokeApiKey: api_key.created with prefix and scopes, api_key.revoked', async () => {
    let created: Loose;
    expect(
      await entriesOf(async () => {
        created = (
          await ok(
            'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id prefix createdBy } } }',
            { i: { name: 'ci', scopes: ['audit:read'] } },
          )
        ).createApiKey.apiKey;
      }),
    ).toEqual([
      {
        action: 'api_key.created',
        resourceType: 'api_key',
        resourceId: created.id,
        metadata: { actorType: 'operator', actor, prefix: created.prefix, scopes: ['audit:read'] },
      },
    ]);
    expect(created.createdBy).toBe(actor);
    expect(
      await entriesOf(() =>
        ok('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: created.id }),
      ),
    ).toEqual([
      {
        action: 'api_key.revoked',
        resourceType: 'api_key',
        resourceId: created.id,
        metadata: { actorType: 'operator', actor },
      },
    ]);
    // Refusals audit nothing: a revoked key, a scope the caller cannot grant.
    expect(
      await entriesOf(async () => {
        const again = await q('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', {
          id: created.id,
        });
        expect(errorCodes(again)).toEqual(['NOT_FOUND']);
      }),
    ).toEqual([]);
  });

  it('createAgent and updateAgent: agent.created with name and role, agent.updated with fields', async () => {
    let id = '';
    expect(
      await entriesOf(async () => {
        id = (
          await ok('mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }', {
            i: { name: 'audited', publicKey: newAgentPublicKey(), allowedTools: ['search'] },
          })
        ).createAgent.id;
      }),
    ).toEqual([
      {
        action: 'agent.created',
        resourceType: 'agent',
        resourceId: id,
        metadata: { actorType: 'operator', actor, name: 'audited', role: 'agent' },
      },
    ]);
    expect(
      await entriesOf(() =>
        ok(
          'mutation($id: ID!) { updateAgent(id: $id, input: { role: "reader", personaTone: null }) { id } }',
          { id },
        ),
      ),
    ).toEqual([
      {
        action: 'agent.updated',
        resourceType: 'agent',
        resourceId: id,
        metadata: { actorType: 'operator', actor, fields: ['role', 'personaTone'] },
      },
    ]);
    expect(
      await entriesOf(async () => {
        const missing = await q(
          'mutation { updateAgent(id: "00000000-0000-0000-0000-000000000000", input: { role: "x" }) { id } }',
        );
        expect(errorCodes(missing)).toEqual(['NOT_FOUND']);
      }),
    ).toEqual([]);
  });

  it('updateGatewayPolicy: gateway_policy.updated with the fields given', async () => {
    expect(
      await entriesOf(() =>
        ok(
          'mutation { updateGatewayPolicy(input: { blockedTools: ["rm"], approvalTtlSeconds: null }) { __typename } }',
        ),
      ),
    ).toEqual([
      {
        action: 'gateway_policy.updated',
        resourceType: 'gateway_policy',
        resourceId: gw.tenant.id,
        metadata: { actorType: 'operator', actor, fields: ['blockedTools'] },
      },
    ]);
  });

  it('registerMcpServer, updateMcpServer, removeMcpServer: one mcp_server entry each', async () => {
    let id = '';
    expect(
      await entriesOf(async () => {
        id = (
          await ok(
            'mutation { registerMcpServer(input: { serverId: "audited", url: "http://127.0.0.1:11/" }) { id } }',
          )
        ).registerMcpServer.id;
      }),
    ).toEqual([
      {
        action: 'mcp_server.registered',
        resourceType: 'mcp_server',
        resourceId: id,
        metadata: {
          actorType: 'operator',
          actor,
          serverId: 'audited',
          url: 'http://127.0.0.1:11/',
        },
      },
    ]);
    expect(
      await entriesOf(() =>
        ok(
          'mutation { updateMcpServer(serverId: "audited", input: { url: "http://127.0.0.1:12/", mockResults: { a: {} }, transport: null }) { id } }',
        ),
      ),
    ).toEqual([
      {
        action: 'mcp_server.updated',
        resourceType: 'mcp_server',
        resourceId: 'audited',
        metadata: {
          actorType: 'operator',
          actor,
          serverId: 'audited',
          fields: ['mockResults', 'url'],
        },
      },
    ]);
    expect(await entriesOf(() => ok('mutation { removeMcpServer(serverId: "audited") }'))).toEqual([
      {
        action: 'mcp_server.removed',
        resourceType: 'mcp_server',
        resourceId: 'audited',
        metadata: { actorType: 'operator', actor, serverId: 'audited' },
      },
    ]);
    expect(
      await entriesOf(async () => {
        const gone = await q('mutation { removeMcpServer(serverId: "audited") }');
        expect(errorCodes(gone)).toEqual(['NOT_FOUND']);
      }),
    ).toEqual([]);
  });

  it('publishNplPolicy once, pinNplPolicy, unpinNplPolicy: npl_policy entries', async () => {
    const publish = () =>
      ok(
        'mutation($i: PublishNplPolicyInput!) { publishNplPolicy(input: $i) { ... on MutationPublishNplPolicySuccess { data { uri created policyVersion { contentHash } } } } }',
        { i: { source: POLICY } },
      );
    let published: Loose;
    expect(
      await entriesOf(async () => {
        published = (await publish()).publishNplPolicy.data;
      }),
    ).toEqual([
      {
        action: 'npl_policy.published',
        resourceType: 'npl_policy',
        resourceId: 'svc://audited@1.0.0',
        metadata: {
          actorType: 'operator',
          actor,
          contentHash: published.policyVersion.contentHash,
        },
      },
    ]);
    // The same content again publishes nothing and audits nothing.
    expect(await entriesOf(publish)).toEqual([]);
    const uri = 'svc://audited@1.0.0';
    for (const [field, action] of [
      ['pinNplPolicy', 'npl_policy.pinned'],
      ['unpinNplPolicy', 'npl_policy.unpinned'],
    ] as const) {
      expect(
        await entriesOf(() => ok(`mutation($u: String!) { ${field}(uri: $u) }`, { u: uri })),
      ).toEqual([
        {
          action,
          resourceType: 'npl_policy',
          resourceId: uri,
          metadata: { actorType: 'operator', actor },
        },
      ]);
    }
    expect(
      await entriesOf(async () => {
        const unpinned = await q('mutation($u: String!) { unpinNplPolicy(uri: $u) }', { u: uri });
        expect(errorCodes(unpinned)).toEqual(['NOT_FOUND']);
        expect(unpinned.errors?.[0]?.message).toContain(`pin ${uri}`);
        const missing = await q('mutation { pinNplPolicy(uri: "svc://absent@1.0.0") }');
        expect(errorCodes(missing)).toEqual(['NOT_FOUND']);
        expect(missing.errors?.[0]?.message).toContain(
          'published or bundled policy svc://absent@1.0.0',
        );
      }),
    ).toEqual([]);
  });
});
