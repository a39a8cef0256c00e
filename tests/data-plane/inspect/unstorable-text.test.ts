// A call carrying text PostgreSQL cannot store (NUL, an unpaired surrogate) is still answered as
// an audited deny: the entry is written in the storable encoding, readable, and the chain and
// its export verify. An approval id holding such text names no approval: 404 APPROVAL_NOT_FOUND
// on the approvals route, the audited 404 deny APPROVAL_NOT_FOUND on a resubmission.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAuditExport, verifyAuditChain } from '../../../shared/audit/index.js';
import { decodeStorableText } from '../../../shared/text/storable-text.js';
import { exportAuditTrail } from '../../../storage/tables/audit-export.js';
import { type DatabaseKindUnderTest, postgresUrl } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { countAuditEntries, expectDeny, getApproval } from './support.js';

const KINDS: DatabaseKindUnderTest[] = postgresUrl ? ['pglite', 'postgres'] : ['pglite'];
const HOLD_POLICY = {
  version: '1.0.0',
  policyName: 'hold-all',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'hold',
      action: 'REQUIRE_HUMAN',
      condition: "args.text == 'hold'",
      alertSeverity: 'LOW',
    },
  ],
};

function call(fields: { agent: string; tool?: string; text?: string; approvalId?: string }) {
  const tool = fields.tool ?? 'echo';
  return {
    agent_id: fields.agent,
    execution_id: 'exec\u0000\ud800',
    server_id: 'files',
    tool_name: tool,
    execution_mode: 'production',
    ...(fields.approvalId === undefined ? {} : { approval_id: fields.approvalId }),
    request: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: { text: fields.text ?? 'x', ['k\u0000']: '\udc00' } },
    },
  };
}

describe.each(KINDS)('text PostgreSQL cannot store (%s)', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind);
    const uri = await gw.publishPolicy(gw.tenant.id, HOLD_POLICY);
    await gw.registerServer({
      tenantId: gw.tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/mcp',
      mockResults: { echo: { content: [] } },
    });
    await gw.setPolicy(gw.tenant.id, {
      trustedServers: ['files'],
      blockedTools: ['blocked_*'],
      pinnedPolicies: [uri],
    });
  });
  afterAll(() => gw?.close());

  async function verifyExport(): Promise<void> {
    const entries = [];
    for await (const entry of exportAuditTrail(gw.db, { tenant: gw.tenant.id }))
      entries.push(entry);
    expect(await verifyAuditChain(entries)).toMatchObject({ ok: true, count: entries.length });
    // The written export (what `audit verify` reads) verifies as well.
    let text = '';
    for await (const chunk of formatAuditExport(entries)) text += chunk;
    expect(await verifyAuditChain(JSON.parse(text))).toMatchObject({ ok: true });
  }

  it('audits the deny of an unknown agent id holding NUL, in the storable encoding', async () => {
    const agent = 'agent\u0000\ud800';
    const answer = await gw.inspect(call({ agent }));
    const row = await expectDeny(gw, answer, {
      status: 403,
      reasonCode: 'AGENT_UNKNOWN',
      tenantId: gw.tenant.id,
    });
    expect(row.resourceId).toBe('agent\\u{0}\\u{d800}');
    expect(decodeStorableText(row.resourceId)).toBe(agent);
    await verifyExport();
  });

  it('audits the deny of a blocked tool whose name and arguments hold NUL and surrogates', async () => {
    const tool = 'blocked_\u0000\udfff';
    const answer = await gw.inspect(call({ agent: gw.tenant.agentId, tool }));
    const row = await expectDeny(gw, answer, {
      status: 403,
      reasonCode: 'MCP_METHOD_BLOCKED',
      tenantId: gw.tenant.id,
    });
    expect(decodeStorableText(row.metadata.tool as string)).toBe(tool);
    expect(decodeStorableText(row.metadata.executionId as string)).toBe('exec\u0000\ud800');
    await verifyExport();
  });

  it('holds a call whose arguments hold NUL, and answers a NUL approval id as not found', async () => {
    const held = await gw.inspect(call({ agent: gw.tenant.agentId, text: 'hold' }));
    expect(held.status).toBe(202);
    const approvalId = (held.body.approval as { id: string }).id;
    expect((await getApproval(gw, approvalId)).status).toBe(200);

    const before = await countAuditEntries(gw.db, gw.tenant.id);
    const read = await getApproval(gw, `${approvalId}\u0000`);
    expect(read).toMatchObject({ status: 404, body: { reasonCode: 'APPROVAL_NOT_FOUND' } });
    expect(await countAuditEntries(gw.db, gw.tenant.id)).toBe(before);

    const resubmitted = await gw.inspect(
      call({ agent: gw.tenant.agentId, text: 'hold', approvalId: `\u0000${approvalId}` }),
    );
    await expectDeny(gw, resubmitted, {
      status: 404,
      reasonCode: 'APPROVAL_NOT_FOUND',
      tenantId: gw.tenant.id,
    });
    await verifyExport();
  });
});
