// Identity on inspect (spec §5.5, DESIGN.md §6) end to end, forwarding to a real MCP upstream in
// production mode: with requireAgentIdentity, a call passes only with a credential (and chain)
// for the calling agent and a fresh, single-use Agent-Proof over the exact body; every other case
// is an audited deny with its exact status and reasonCode, and the upstream never sees the call.
// The check sits after the agent checks and before the mode check. A presented identity is
// verified even when the tenant does not require one. NPL conditions read delegation.depth and
// delegation.chain.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueIdentityCredential } from '../../../control-plane/services/agentiam/credentials.js';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import {
  addKeyedAgent,
  agentIamServices,
  delegate,
  inspectProof,
  inspectWithIdentity,
  issueCredential,
  type KeyedAgent,
  revokeCredential,
} from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import {
  connectUpstream,
  countAuditEntries,
  expectDeny,
  findAuditEntry,
  killAgent,
  totalCalls,
} from '../inspect/support.js';

const DELEGATION_POLICY = `version: "1.0.0"
policyName: no-sub-delegation
targetAgents: ["*"]
rules:
  - ruleId: block_deep_delegation
    action: BLOCK
    condition: "delegation.depth > 1"
    alertSeverity: CRITICAL
  - ruleId: block_from_root
    action: BLOCK
    condition: "tool.name == 'fail' && delegation.chain.contains('ROOT')"
    alertSeverity: LOW
`;

describeEachDatabase('inspect with agent identity', (kind) => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  let tenantId: string;
  let root: KeyedAgent;
  let delegate1: KeyedAgent;
  let delegate2: KeyedAgent;
  let rootCredential: Record<string, unknown>;
  let link1: Record<string, unknown>;
  let link2: Record<string, unknown>;

  const call = (agent: KeyedAgent, tool = 'echo', mode = 'production') =>
    inspectBody(agent.id, { tool, mode, args: { text: 'hi' } });

  /** A deny that is audited and never reached the upstream. */
  const expectRefused = async (
    answer: { status: number; body: Record<string, unknown> },
    status: number,
    reasonCode: string,
    tenant = tenantId,
  ) => {
    const calls = totalCalls(upstream);
    await expectDeny(gateway, answer, { status, reasonCode, tenantId: tenant });
    expect(totalCalls(upstream)).toBe(calls);
  };

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: false });
    tenantId = gateway.tenant.id;
    await connectUpstream(gateway, gateway.tenant, upstream);
    await gateway.setPolicy(tenantId, {
      trustedServers: ['files'],
      requireAgentIdentity: true,
      maxDelegationDepth: 3,
    });
    root = await addKeyedAgent(gateway, tenantId, { allowedTools: ['echo', 'fail'] });
    delegate1 = await addKeyedAgent(gateway, tenantId);
    delegate2 = await addKeyedAgent(gateway, tenantId);
    rootCredential = await issueCredential(gateway, root);
    // One expiry for every link: a later link never outlives an earlier one.
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    link1 = await delegate({
      tenantId,
      from: root,
      to: delegate1,
      tools: ['echo', 'fail'],
      expiresAt,
    });
    link2 = await delegate({
      tenantId,
      from: delegate1,
      to: delegate2,
      tools: ['echo'],
      expiresAt,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('forwards a call that carries its credential and a fresh proof', async () => {
    const calls = upstream.calls.get('echo') ?? 0;
    const answer = await inspectWithIdentity(gateway, call(root), {
      credential: rootCredential,
      key: root.key,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ decision: 'allow', reasonCode: null, enforced: true });
    expect(upstream.calls.get('echo')).toBe(calls + 1);
  });

  it("forwards a delegate's call with the chain from the root credential", async () => {
    const answer = await inspectWithIdentity(gateway, call(delegate2), {
      credential: rootCredential,
      chain: [link1, link2],
      key: delegate2.key,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.decision).toBe('allow');
  });

  it('401 AGENT_IDENTITY_REQUIRED without a credential, without a proof, or without both', async () => {
    await expectRefused(await gateway.inspect(call(root)), 401, 'AGENT_IDENTITY_REQUIRED');
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), { credential: rootCredential }),
      401,
      'AGENT_IDENTITY_REQUIRED',
    );
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), { key: root.key }),
      401,
      'AGENT_IDENTITY_REQUIRED',
    );
  });

  it('refuses a replayed proof: AGENT_PROOF_REPLAYED', async () => {
    const first = await inspectWithIdentity(gateway, call(root), {
      credential: rootCredential,
      key: root.key,
    });
    expect(first.status).toBe(200);
    const again = await inspectWithIdentity(gateway, call(root), {
      credential: rootCredential,
      proof: first.proof,
    });
    await expectRefused(again, 403, 'AGENT_PROOF_REPLAYED');
  });

  it('refuses proofs by another key, over another body or URL, or stale: AGENT_PROOF_*', async () => {
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), {
        credential: rootCredential,
        key: generateEd25519KeyMaterial(),
      }),
      403,
      'AGENT_PROOF_INVALID',
    );
    const otherBody = await inspectProof(gateway, root.key, JSON.stringify({ other: true }));
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), {
        credential: rootCredential,
        proof: otherBody,
      }),
      403,
      'AGENT_PROOF_INVALID',
    );
    const body = JSON.stringify({ ...call(root), agent_credential: rootCredential });
    const wrongUrl = await inspectProof(gateway, root.key, body, {
      htu: 'https://elsewhere.example/api/v1/mcp/gateway/inspect',
    });
    await expectRefused(
      await gateway.inspect(body, { headers: { 'agent-proof': wrongUrl } }),
      403,
      'AGENT_PROOF_INVALID',
    );
    const stale = await inspectProof(gateway, root.key, body, {
      now: new Date(Date.now() - 120_000),
    });
    await expectRefused(
      await gateway.inspect(body, { headers: { 'agent-proof': stale } }),
      403,
      'AGENT_PROOF_EXPIRED',
    );
  });

  it('refuses a credential changed after signing, expired, or revoked', async () => {
    const subject = rootCredential.credentialSubject as Record<string, unknown>;
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), {
        credential: { ...rootCredential, credentialSubject: { ...subject, permittedTools: ['*'] } },
        key: root.key,
      }),
      403,
      'CREDENTIAL_SIGNATURE_INVALID',
    );
    const stale = await issueIdentityCredential(
      agentIamServices(gateway),
      { tenantId, agentId: root.id, supervisingUserId: 'test', ttlSeconds: 60, actor: 'test' },
      new Date(Date.now() - 3600_000),
    );
    await gateway.sync();
    await expectRefused(
      await inspectWithIdentity(gateway, call(root), {
        credential: stale.credential,
        key: root.key,
      }),
      403,
      'CREDENTIAL_EXPIRED',
    );
    const holder = await addKeyedAgent(gateway, tenantId);
    const revoked = await issueCredential(gateway, holder);
    await revokeCredential(gateway, tenantId, revoked);
    await expectRefused(
      await inspectWithIdentity(gateway, call(holder), { credential: revoked, key: holder.key }),
      403,
      'CREDENTIAL_REVOKED',
    );
  });

  it("refuses another agent's credential or chain: AGENT_IDENTITY_MISMATCH", async () => {
    // delegate1 proves its own key but presents the root's credential, whose subject is root.
    await expectRefused(
      await inspectWithIdentity(gateway, call(delegate1), {
        credential: rootCredential,
        key: delegate1.key,
      }),
      403,
      'AGENT_IDENTITY_MISMATCH',
    );
    // delegate2 presents a chain that ends at delegate1.
    await expectRefused(
      await inspectWithIdentity(gateway, call(delegate2), {
        credential: rootCredential,
        chain: [link1],
        key: delegate2.key,
      }),
      403,
      'AGENT_IDENTITY_MISMATCH',
    );
  });

  it('checks the called tool against the chain: DELEGATION_TOOL_NOT_PERMITTED', async () => {
    await expectRefused(
      await inspectWithIdentity(gateway, call(delegate2, 'fail'), {
        credential: rootCredential,
        chain: [link1, link2],
        key: delegate2.key,
      }),
      403,
      'DELEGATION_TOOL_NOT_PERMITTED',
    );
  });

  it('checks identity after the agent checks and before the mode check, in every mode', async () => {
    const killed = await addKeyedAgent(gateway, tenantId);
    await killAgent(gateway, tenantId, killed.id);
    // A killed agent is an authentication refusal, audited through the bounded refusal path
    // (docs/security.md, "Refusal auditing"), and checked before identity.
    const calls = totalCalls(upstream);
    const revoked = await gateway.inspect(call(killed));
    expect({ status: revoked.status, reasonCode: revoked.body.reasonCode }).toEqual({
      status: 403,
      reasonCode: 'AGENT_REVOKED',
    });
    expect(await findAuditEntry(gateway.db, revoked.body.auditId)).toMatchObject({
      tenantId,
      action: 'auth.refused',
      metadata: { reasonCode: 'AGENT_REVOKED', subject: killed.id },
    });
    expect(totalCalls(upstream)).toBe(calls);
    await expectRefused(
      await gateway.inspect(call(root, 'echo', 'shadow')),
      401,
      'AGENT_IDENTITY_REQUIRED',
    );
    await gateway.setPolicy(tenantId, { allowedModes: ['simulation'] });
    try {
      await expectRefused(await gateway.inspect(call(root)), 401, 'AGENT_IDENTITY_REQUIRED');
      const wrongMode = await inspectWithIdentity(gateway, call(root), {
        credential: rootCredential,
        key: root.key,
      });
      await expectRefused(wrongMode, 403, 'EXECUTION_MODE_NOT_ALLOWED');
    } finally {
      await gateway.setPolicy(tenantId, { allowedModes: ['production', 'simulation', 'shadow'] });
    }
  });

  it('verifies an identity presented to a tenant that does not require one', async () => {
    const tenant = await gateway.addTenant();
    await connectUpstream(gateway, tenant, upstream);
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'] });
    const agent = await addKeyedAgent(gateway, tenant.id);
    const credential = await issueCredential(gateway, agent);
    const init = { key: tenant.key };
    expect((await gateway.inspect(call(agent), init)).status).toBe(200);
    const good = await inspectWithIdentity(
      gateway,
      call(agent),
      { credential, key: agent.key },
      init,
    );
    expect(good.status).toBe(200);
    const subject = credential.credentialSubject as Record<string, unknown>;
    await expectRefused(
      await inspectWithIdentity(
        gateway,
        call(agent),
        {
          credential: { ...credential, credentialSubject: { ...subject, agentId: 'x' } },
          key: agent.key,
        },
        init,
      ),
      403,
      'CREDENTIAL_SUBJECT_UNKNOWN',
      tenant.id,
    );
    await expectRefused(
      await inspectWithIdentity(gateway, call(agent), { credential }, init),
      401,
      'AGENT_IDENTITY_REQUIRED',
      tenant.id,
    );
  });

  it('gives NPL conditions delegation.depth and delegation.chain', async () => {
    const tenant = await gateway.addTenant();
    await connectUpstream(gateway, tenant, upstream);
    const a0 = await addKeyedAgent(gateway, tenant.id);
    const a1 = await addKeyedAgent(gateway, tenant.id);
    const a2 = await addKeyedAgent(gateway, tenant.id);
    const policy = await gateway.publishPolicy(tenant.id, DELEGATION_POLICY.replace('ROOT', a0.id));
    await gateway.setPolicy(tenant.id, {
      trustedServers: ['files'],
      pinnedPolicies: [policy],
      maxDelegationDepth: 3,
    });
    const credential = await issueCredential(gateway, a0);
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    const first = await delegate({
      tenantId: tenant.id,
      from: a0,
      to: a1,
      tools: ['*'],
      expiresAt,
    });
    const second = await delegate({
      tenantId: tenant.id,
      from: a1,
      to: a2,
      tools: ['*'],
      expiresAt,
    });
    const init = { key: tenant.key };
    const depth1 = await inspectWithIdentity(
      gateway,
      call(a1),
      { credential, chain: [first], key: a1.key },
      init,
    );
    expect(depth1.status).toBe(200);
    const depth2 = await inspectWithIdentity(
      gateway,
      call(a2),
      { credential, chain: [first, second], key: a2.key },
      init,
    );
    await expectRefused(depth2, 403, 'NPL_POLICY_BLOCK', tenant.id);
    expect(depth2.body.ruleId).toBe('block_deep_delegation');
    // Without identity the depth is 0 and the chain empty: neither rule fires.
    expect((await gateway.inspect(call(a2), init)).status).toBe(200);
    expect((await gateway.inspect(call(a1, 'fail'), init)).status).toBe(200);
    // The chain names the root agent: a call by its delegate is blocked by the chain rule.
    const viaRoot = await inspectWithIdentity(
      gateway,
      call(a1, 'fail'),
      { credential, chain: [first], key: a1.key },
      init,
    );
    await expectRefused(viaRoot, 403, 'NPL_POLICY_BLOCK', tenant.id);
    expect(viaRoot.body.ruleId).toBe('block_from_root');
  });

  it('audits every identity deny of the tenant', async () => {
    const before = await countAuditEntries(gateway.db, tenantId);
    await gateway.inspect(call(root));
    expect(await countAuditEntries(gateway.db, tenantId)).toBe(before + 1);
  });
});
