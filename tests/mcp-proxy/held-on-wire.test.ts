// Held calls and multi-round calls of MCP 2026-07-28 through /mcp/{serverId} (issue 28, §1–2),
// over raw HTTP in front of a server of that era (tests/support/stateless-upstream.ts):
// - a held call is answered at once: an InputRequiredResult sending the user to the approval's
//   console page with the gateway's requestState, or, for a client without URL elicitation,
//   -32021 naming the capability, the approval and its page; nothing goes upstream;
// - the retry with that requestState: the same InputRequiredResult (APPROVAL_PENDING) before a
//   decision, the upstream's result once approved (one upstream call), the audited deny once
//   rejected; the approval is single-use, so replaying the retry is refused;
// - a tampered, foreign or expired requestState is refused (MCP_REQUEST_STATE_INVALID), audited,
//   nothing forwarded;
// - an upstream's own InputRequiredResult reaches the client with its requestState wrapped; the
//   next round goes upstream with the upstream's value, not decided nor counted again (a usage
//   limit of one call lets it through), and a round that changes the call is governed anew.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DERIVED_KEY_LABELS, deriveKey } from '../../shared/crypto/derived-key.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { sealRequestState } from '../../shared/mcp/request-state.js';
import { graphql } from '../control-plane/graphql/support.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  CONFIRM_STATE,
  type StatelessTestUpstream,
  startStatelessUpstream,
} from '../support/stateless-upstream.js';
import { HOLD_ECHO_POLICY } from './support.js';
import {
  apiKeyHeaders,
  mcpFetch,
  statelessHeaders,
  statelessRequest,
} from './transport-support.js';

const URL_ELICITATION = { elicitation: { url: {} } };

type Body = ReturnType<typeof statelessRequest>;

function toolCall(
  id: string,
  name: string,
  args: Record<string, unknown>,
  capabilities: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Body {
  return statelessRequest('tools/call', { name, arguments: args, ...extra }, id, capabilities);
}

describeEachDatabase('held calls and rounds on the MCP 2026-07-28 wire', (kind) => {
  let gateway: TestGateway;
  let upstream: StatelessTestUpstream;
  let proxyUrl: string;
  let admin: string;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    upstream = await startStatelessUpstream();
    gateway = await startTestGateway(kind, { requestStateMasterKey: masterKey });
    const tenantId = gateway.tenant.id;
    await gateway.registerServer({ tenantId, serverId: 'modern', url: upstream.url });
    admin = await gateway.addApiKey(tenantId, [...ALL_SCOPES]);
    const uri = await gateway.publishPolicy(tenantId, HOLD_ECHO_POLICY);
    await gateway.setPolicy(tenantId, { trustedServers: ['modern'], pinnedPolicies: [uri] });
    proxyUrl = `${gateway.url}/mcp/modern`;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const upstreamCalls = (name: string) =>
    upstream.log.filter((r) => r.method === 'tools/call' && r.body.params?.name === name).length;

  async function send(agentId: string, body: Body) {
    return mcpFetch(proxyUrl, {
      body,
      headers: { ...apiKeyHeaders(gateway.tenant.key, agentId), ...statelessHeaders(body) },
    });
  }

  async function decide(approvalId: string, decision: 'approveApproval' | 'rejectApproval') {
    const answer = await graphql<Record<string, { status: string }>>(
      gateway.url,
      admin,
      `mutation($id: ID!) { ${decision}(id: $id, reason: "decided by the test") { status } }`,
      { id: approvalId },
    );
    expect(answer.errors).toBeUndefined();
  }

  async function agent(tools: string[] = ['echo']) {
    return gateway.addAgent(gateway.tenant.id, { allowedTools: tools });
  }

  it('answers a held call at once with an InputRequiredResult to the approval page; approved, the retry gets the result once', async () => {
    const agentId = await agent();
    const before = upstreamCalls('echo');
    const held = await send(
      agentId,
      toolCall('h1', 'echo', { text: 'needs-human' }, URL_ELICITATION),
    );
    expect(held.status).toBe(200);
    const result = held.body.result;
    const approvalId = result._meta['dev.agent-gateway/approvalId'];
    expect(result).toEqual({
      resultType: 'input_required',
      inputRequests: {
        'agent-gateway-approval': {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            message: expect.stringContaining(approvalId),
            url: `${gateway.url}/console/approvals/${approvalId}`,
          },
        },
      },
      requestState: expect.stringMatching(/^ags1\./),
      _meta: {
        'dev.agent-gateway/reasonCode': 'NPL_REQUIRE_HUMAN',
        'dev.agent-gateway/approvalId': approvalId,
        'dev.agent-gateway/expiresAt': expect.any(String),
      },
    });
    expect(upstreamCalls('echo')).toBe(before);

    // Before a decision: the same approval, still pending; nothing forwarded.
    const retry = (id: string) =>
      toolCall(id, 'echo', { text: 'needs-human' }, URL_ELICITATION, {
        requestState: result.requestState,
        inputResponses: { 'agent-gateway-approval': { action: 'accept' } },
      });
    const pending = await send(agentId, retry('h2'));
    expect(pending.status).toBe(200);
    expect(pending.body.result).toMatchObject({
      resultType: 'input_required',
      _meta: {
        'dev.agent-gateway/reasonCode': 'APPROVAL_PENDING',
        'dev.agent-gateway/approvalId': approvalId,
      },
    });
    expect(upstreamCalls('echo')).toBe(before);

    await decide(approvalId, 'approveApproval');
    const approved = await send(agentId, retry('h3'));
    expect(approved.body).toEqual({
      jsonrpc: '2.0',
      id: 'h3',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'needs-human' }] },
    });
    expect(upstreamCalls('echo')).toBe(before + 1);
    // The upstream saw the call, not the gateway's round.
    const forwarded = upstream.log.at(-1)!.body.params;
    expect(forwarded.requestState).toBeUndefined();
    expect(forwarded.inputResponses).toBeUndefined();

    // The approval is single-use: the same retry again is refused, nothing forwarded.
    const replayed = await send(agentId, retry('h4'));
    expect(replayed.body.error).toMatchObject({
      code: -32001,
      data: { reasonCode: 'APPROVAL_ALREADY_USED' },
    });
    expect(upstreamCalls('echo')).toBe(before + 1);
  });

  it('rejected, the retry is the audited deny', async () => {
    const agentId = await agent();
    const before = upstreamCalls('echo');
    const held = await send(
      agentId,
      toolCall('r1', 'echo', { text: 'needs-human' }, URL_ELICITATION),
    );
    const { requestState, _meta } = held.body.result;
    await decide(_meta['dev.agent-gateway/approvalId'], 'rejectApproval');
    const denied = await send(
      agentId,
      toolCall('r2', 'echo', { text: 'needs-human' }, URL_ELICITATION, { requestState }),
    );
    expect(denied.status).toBe(200);
    expect(denied.body.error).toMatchObject({
      code: -32001,
      data: { reasonCode: 'APPROVAL_REJECTED' },
    });
    const entry = await findAuditEntry(gateway.db, denied.body.error.data.auditId);
    expect(entry).toMatchObject({
      action: 'inspect.deny',
      metadata: { reasonCode: 'APPROVAL_REJECTED', tool: 'echo' },
    });
    expect(upstreamCalls('echo')).toBe(before);
  });

  it('tells a client without URL elicitation -32021 with the approval and its page; its plain retry resumes the approval', async () => {
    const agentId = await agent();
    const before = upstreamCalls('echo');
    const held = await send(agentId, toolCall('c1', 'echo', { text: 'needs-human' }, {}));
    expect(held.status).toBe(400);
    const approvalId = held.body.error.data.approvalId;
    expect(held.body).toEqual({
      jsonrpc: '2.0',
      id: 'c1',
      error: {
        code: -32021,
        message: expect.stringContaining('elicitation.url'),
        data: {
          reasonCode: 'NPL_REQUIRE_HUMAN',
          requiredCapabilities: { elicitation: { url: {} } },
          approvalId,
          url: `${gateway.url}/console/approvals/${approvalId}`,
          expiresAt: expect.any(String),
          requestState: expect.stringMatching(/^ags1\./),
        },
      },
    });
    // Undecided, the same call is held by the same approval (found by the call's digest).
    const again = await send(agentId, toolCall('c2', 'echo', { text: 'needs-human' }, {}));
    expect(again.body.error.data.approvalId).toBe(approvalId);
    await decide(approvalId, 'approveApproval');
    const approved = await send(agentId, toolCall('c3', 'echo', { text: 'needs-human' }, {}));
    expect(approved.body.result).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'needs-human' }],
    });
    expect(upstreamCalls('echo')).toBe(before + 1);
  });

  it.each([
    ['a MAC that does not verify', 'forged'],
    ['another agent', 'agent'],
    ['other arguments', 'arguments'],
    ['an expired round', 'expired'],
    ['another master key', 'key'],
  ])(
    'refuses a requestState of %s: MCP_REQUEST_STATE_INVALID, audited, nothing forwarded',
    async (_case, variant) => {
      const agentId = await agent();
      const other = await agent();
      const held = await send(
        agentId,
        toolCall('t1', 'echo', { text: 'needs-human' }, URL_ELICITATION),
      );
      const issued: string = held.body.result.requestState;
      const key = deriveKey(masterKey, DERIVED_KEY_LABELS.MCP_REQUEST_STATE);
      const bound = {
        tenantId: gateway.tenant.id,
        agentId,
        serverId: 'modern',
        callDigest: 'x',
      };
      let state = issued;
      let caller = agentId;
      let args: Record<string, unknown> = { text: 'needs-human' };
      if (variant === 'forged')
        state = `${issued.slice(0, -2)}${issued.endsWith('AA') ? 'BB' : 'AA'}`;
      if (variant === 'agent') caller = other;
      if (variant === 'arguments') args = { text: 'needs-human', more: true };
      if (variant === 'expired') {
        state = sealRequestState(key, {
          kind: 'round',
          ...bound,
          expiresAt: Date.now() - 1,
          decision: 'allow',
        });
      }
      if (variant === 'key') {
        const foreign = deriveKey(randomBytes(32), DERIVED_KEY_LABELS.MCP_REQUEST_STATE);
        state = sealRequestState(foreign, {
          kind: 'round',
          ...bound,
          expiresAt: Date.now() + 60_000,
          decision: 'allow',
        });
      }
      const before = upstream.log.length;
      const refused = await send(
        caller,
        toolCall('t2', 'echo', args, URL_ELICITATION, { requestState: state }),
      );
      expect(refused.status).toBe(200);
      expect(refused.body.error).toMatchObject({
        code: -32001,
        data: { reasonCode: 'MCP_REQUEST_STATE_INVALID' },
      });
      const entry = await findAuditEntry(gateway.db, refused.body.error.data.auditId);
      expect(entry).toMatchObject({
        action: 'inspect.deny',
        metadata: { reasonCode: 'MCP_REQUEST_STATE_INVALID' },
      });
      expect(upstream.log.length).toBe(before);
    },
  );

  it('wraps an upstream’s requestState and forwards its next round as decided, counted once', async () => {
    const agentId = await agent(['confirm', 'echo']);
    await gateway.setPolicy(gateway.tenant.id, {
      limits: [
        {
          limitId: 'confirm_once',
          per: 'AGENT',
          tools: ['confirm'],
          servers: [],
          windowSeconds: 3600,
          maxCalls: 1,
          sumArgument: null,
          maxSum: null,
          action: 'DENY',
        },
      ],
    });
    await gateway.sync();
    try {
      const first = await send(agentId, toolCall('u1', 'confirm', { text: 'deploy' }, {}));
      const asked = first.body.result;
      expect(asked).toMatchObject({
        resultType: 'input_required',
        inputRequests: { confirm: { method: 'elicitation/create' } },
        requestState: expect.stringMatching(/^ags1\./),
      });
      expect(asked.requestState).not.toContain(CONFIRM_STATE);
      const calls = upstreamCalls('confirm');
      const answered = await send(
        agentId,
        toolCall(
          'u2',
          'confirm',
          { text: 'deploy' },
          {},
          {
            requestState: asked.requestState,
            inputResponses: { confirm: { action: 'accept', content: {} } },
          },
        ),
      );
      expect(answered.body.result).toEqual({
        resultType: 'complete',
        content: [{ type: 'text', text: 'confirmed deploy' }],
      });
      expect(upstreamCalls('confirm')).toBe(calls + 1);
      const forwarded = upstream.log.at(-1)!.body.params;
      expect(forwarded.requestState).toBe(CONFIRM_STATE);
      expect(forwarded.inputResponses).toEqual({ confirm: { action: 'accept', content: {} } });

      // The limit counted the first round only: a new call is over it.
      const fresh = await send(agentId, toolCall('u3', 'confirm', { text: 'again' }, {}));
      expect(fresh.body.error).toMatchObject({ data: { reasonCode: 'RATE_LIMIT_EXCEEDED' } });
      // A round that changes the call is a new call: governed (and refused by the limit) too.
      const changed = await send(
        agentId,
        toolCall('u4', 'confirm', { text: 'other' }, {}, { requestState: asked.requestState }),
      );
      expect(changed.body.error).toMatchObject({ data: { reasonCode: 'RATE_LIMIT_EXCEEDED' } });
      expect(upstreamCalls('confirm')).toBe(calls + 1);
    } finally {
      await gateway.setPolicy(gateway.tenant.id, { limits: [] });
      await gateway.sync();
    }
  });
});
