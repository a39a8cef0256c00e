// The kill's audit entry names what it revoked (issue 22 item 13; docs/kill-switch.md): every
// token jti, credential, delegation, OAuth client and rejected approval, at most 1 000 of each per
// entry, the rest in `agent.killed_continued` entries referencing the kill's entry; the counts
// stay, and the chain verifies.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyAuditChain } from '../../../shared/audit/index.js';
import { exportAll } from '../../storage/fixtures/audit.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';
import { registerClientOf } from '../oauth/oauth-fixture.js';
import { type KillScene, postKill, startKillScene, tokenFor } from './kill-fixture.js';

interface Entry {
  readonly id: string;
  readonly action: string;
  readonly metadata: Record<string, unknown>;
}

describeEachDatabase('the kill audit entry lists every id', (kind) => {
  let scene: KillScene;
  beforeAll(async () => {
    scene = await startKillScene(kind);
  });
  afterAll(async () => {
    await scene?.close();
  });

  async function killEntries(agentId: string): Promise<Entry[]> {
    const rows = await scene.gateway.db.query<Entry>(
      `select id, action, metadata from audit_entries
        where "resourceId" = $1 and action like 'agent.killed%' order by seq`,
      [agentId],
    );
    return rows.map((row) => ({
      ...row,
      metadata: typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata,
    }));
  }

  async function ids(sql: string, agentId: string): Promise<string[]> {
    const rows = await scene.gateway.db.query<{ id: string }>(sql, [agentId]);
    return rows.map((row) => row.id).sort();
  }

  it('names every token, credential, delegation, client and approval it revoked, with the counts', async () => {
    const { gateway } = scene;
    const victim = await scene.addVictim();
    // A second client with a token of its own, and two held calls.
    const { clientId, secret } = await registerClientOf(gateway, {
      tenantId: scene.tenantId,
      agentId: victim.id,
    });
    await gateway.sync();
    expect((await tokenFor(gateway, { clientId, secret: secret! })).status).toBe(200);
    await gateway.runtime.issuedTokens.flush();
    for (let i = 0; i < 2; i++) {
      const held = await gateway.inspect(inspectBody(victim.id, { tool: 'write', args: { n: i } }));
      expect(held.status).toBe(202);
    }

    const answer = await postKill(
      gateway,
      victim.key.publicKeyMultibase,
      { reason: 'r' },
      scene.killKey,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.revoked).toEqual({
      credentials: 1,
      delegations: 1,
      oauthClients: 2,
      tokens: 2,
    });
    const entries = await killEntries(victim.id);
    expect(entries.map((entry) => entry.action)).toEqual(['agent.killed']);
    const [entry] = entries;
    expect(entry!.id).toBe(answer.body.auditId);
    expect(entry!.metadata).toMatchObject({
      revoked: { credentials: 1, delegations: 1, oauthClients: 2, tokens: 2 },
      rejectedApprovals: 2,
      continuedIn: 0,
      revokedIds: {
        credentials: await ids(
          'select id from identity_credentials where "agentId" = $1',
          victim.id,
        ),
        delegations: await ids(
          'select id from delegation_links where "issuerAgentId" = $1',
          victim.id,
        ),
        oauthClients: await ids('select id from oauth_clients where "agentId" = $1', victim.id),
        tokens: await ids('select id from issued_tokens where "agentId" = $1', victim.id),
      },
      rejectedApprovalIds: await ids(
        `select id from approvals where "agentId" = $1 and status = 'rejected'`,
        victim.id,
      ),
    });
    const listed = entry!.metadata.revokedIds as Record<string, string[]>;
    expect(listed.oauthClients).toContain(clientId);
    expect(listed.oauthClients).toContain(victim.client.clientId);
    expect(listed.tokens).toHaveLength(2);
    expect(entry!.metadata.rejectedApprovalIds).toHaveLength(2);
  });

  it('past 1 000 tokens, follow-up entries reference the kill entry and together list them all', async () => {
    const { gateway } = scene;
    const victim = await scene.addVictim();
    // 2 500 more live tokens, written straight to storage (issuing them one by one is slow).
    await gateway.db.query(
      `insert into issued_tokens (id, "tenantId", "clientId", "agentId", audience, scope,
          "issuedAt", "expiresAt")
        select 'jti-bulk-' || lpad(g::text, 5, '0'), $1, $2, $3, 'mcp://files', '', now(),
          now() + interval '1 hour'
        from generate_series(1, 2500) g`,
      [scene.tenantId, victim.client.clientId, victim.id],
    );
    const all = await ids('select id from issued_tokens where "agentId" = $1', victim.id);
    expect(all).toHaveLength(2501);

    const answer = await postKill(
      gateway,
      victim.key.publicKeyMultibase,
      { reason: 'r' },
      scene.killKey,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.revoked).toMatchObject({ tokens: 2501 });
    const [kill, ...continued] = await killEntries(victim.id);
    expect(kill).toMatchObject({
      id: answer.body.auditId,
      action: 'agent.killed',
      metadata: { revoked: { tokens: 2501, credentials: 1 }, continuedIn: 2 },
    });
    expect(continued.map((entry) => entry.action)).toEqual([
      'agent.killed_continued',
      'agent.killed_continued',
    ]);
    continued.forEach((entry, index) => {
      expect(entry.metadata).toMatchObject({
        killId: answer.body.killId,
        killEntryId: kill!.id,
        part: index + 1,
        parts: 2,
        // Exhausted kinds are empty on later pages.
        revokedIds: { credentials: [], delegations: [], oauthClients: [] },
        rejectedApprovalIds: [],
      });
    });
    const pages = [kill!, ...continued].map(
      (entry) => (entry.metadata.revokedIds as { tokens: string[] }).tokens,
    );
    expect(pages.map((page) => page.length)).toEqual([1000, 1000, 501]);
    expect(pages.flat()).toEqual(all);

    const chain = await exportAll(gateway.db, scene.tenantId);
    expect(await verifyAuditChain(chain)).toMatchObject({ ok: true, count: chain.length });
  });
});
