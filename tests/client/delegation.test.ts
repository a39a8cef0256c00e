// `@agent-gateway/client/delegation` against a real gateway over HTTP: agent A (spawned with
// tools search and send_mail) delegates search to its sub-agent B with the client's delegate();
// the gateway's chain verifier (POST /api/v1/agentiam/delegation/verify) accepts B's chain for
// search and refuses send_mail at the link; a widened link and an expired link are refused at
// their hop; B's core client configured with the chain and B's own key gets its calls allowed
// under requireAgentIdentity; a link made by `agent-gateway agentiam delegate` for the same
// inputs has the same document shape and verifies too; killing A makes B's chain fail at A's hop.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentDelegationCredential,
  chainFor,
  DelegationError,
  type DelegationPresentation,
  delegate,
} from '../../client/src/delegation.js';
import { createGatewayClient, type GatewayClient } from '../../client/src/index.js';
import {
  type SpawnTestGateway,
  spawnBody,
  startSpawnGateway,
} from '../control-plane/spawn/support.js';
import { verifyChainOverHttp } from '../support/agentiam-client.js';
import { runCliToEnd } from '../support/cli-process.js';
import { describeEachDatabase } from '../support/databases.js';

interface SpawnedAgent {
  readonly id: string;
  readonly publicKey: string;
  readonly privateKeyJwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; d: string };
  readonly credential: Record<string, unknown>;
}

const POLICY = {
  version: '1.0.0',
  policyName: 'delegation-client',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_drop',
      action: 'BLOCK',
      condition: "tool.name == 'drop_table'",
      alertSeverity: 'CRITICAL',
    },
  ],
};

describeEachDatabase('client delegation against a gateway', (kind) => {
  let gateway: SpawnTestGateway;
  let tenantId: string;
  let policy: string;
  let a: SpawnedAgent;
  let b: SpawnedAgent;
  let link: AgentDelegationCredential;
  let presentation: DelegationPresentation;
  let clientB: GatewayClient;

  const spawn = async (overrides: Record<string, unknown>): Promise<SpawnedAgent> => {
    const answer = await gateway.spawn(spawnBody({ mcp_audiences: ['mcp://files'], ...overrides }));
    expect(answer.status).toBe(201);
    return {
      id: answer.body.agent.id,
      publicKey: answer.body.agent.publicKey,
      privateKeyJwk: answer.body.private_key_jwk,
      credential: answer.body.credential,
    };
  };
  const verify = (chain: DelegationPresentation, tool: string) =>
    verifyChainOverHttp(gateway, {
      root_credential: chain.rootCredential,
      delegation_chain: chain.chain,
      requested_tool: tool,
    });

  beforeAll(async () => {
    gateway = await startSpawnGateway(kind);
    tenantId = gateway.tenant.id;
    await gateway.setPolicy(tenantId, { trustedServers: ['files'], requireAgentIdentity: true });
    policy = await gateway.publishPolicy(tenantId, POLICY);
    a = await spawn({ allowed_tools: ['search', 'send_mail'] });
    b = await spawn({ allowed_tools: ['search'], parent_agent_id: a.id });
    link = await delegate({
      from: {
        agentId: a.id,
        privateKeyJwk: a.privateKeyJwk,
        publicKey: a.publicKey,
        credential: a.credential,
      },
      to: { agentId: b.id, publicKey: b.publicKey },
      tools: ['search'],
      ttlSeconds: 600,
      tenantId,
    });
    presentation = chainFor(a.credential, link);
    clientB = createGatewayClient({
      tenantId,
      agentId: b.id,
      apiKey: gateway.tenant.key,
      baseUrl: gateway.url,
      policy,
      serverId: 'files',
      privateKeyJwk: b.privateKeyJwk,
      delegation: presentation,
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
  });

  it("signs A's link to B with A's key: B's chain verifies for the delegated tool", async () => {
    expect(link.issuer).toBe(`did:key:${a.publicKey}`);
    expect(link.credentialSubject).toEqual({
      id: `did:key:${b.publicKey}`,
      tenantId,
      agentId: b.id,
      delegatorAgentId: a.id,
      permittedTools: ['search'],
    });
    expect(presentation).toEqual({ rootCredential: a.credential, chain: [link] });
    const answer = await verify(presentation, 'search');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      valid: true,
      depth: 1,
      agentId: b.id,
      permittedTools: ['search'],
      failure: null,
    });
  });

  it('refuses the chain for a tool A did not delegate, naming the link', async () => {
    const answer = await verify(presentation, 'send_mail');
    expect(answer.body).toMatchObject({
      valid: false,
      failure: { hop: 1, code: 'DELEGATION_TOOL_NOT_PERMITTED' },
    });
  });

  it('refuses a link that widens the tool set (and delegate() refuses it up front given the held credential)', async () => {
    const from = { agentId: a.id, privateKeyJwk: a.privateKeyJwk };
    const to = { agentId: b.id, publicKey: b.publicKey };
    const widened = await delegate({ from, to, tools: ['search', 'delete_all'], tenantId });
    const answer = await verify(chainFor(a.credential, widened), 'search');
    expect(answer.body).toMatchObject({
      valid: false,
      failure: { hop: 1, code: 'DELEGATION_TOOLS_WIDENED' },
    });
    const refusal = await delegate({
      from: { ...from, credential: a.credential },
      to,
      tools: ['search', 'delete_all'],
      tenantId,
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DelegationError);
    expect(refusal).toMatchObject({ code: 'DELEGATION_TOOLS_WIDENED', field: 'tools' });
  });

  it('refuses an expired link at its hop', async () => {
    const expired = await delegate({
      from: { agentId: a.id, privateKeyJwk: a.privateKeyJwk },
      to: { agentId: b.id, publicKey: b.publicKey },
      tools: ['search'],
      ttlSeconds: 60,
      tenantId,
      now: new Date(Date.now() - 3_600_000),
    });
    const answer = await verify(chainFor(a.credential, expired), 'search');
    expect(answer.body).toMatchObject({
      valid: false,
      failure: { hop: 1, code: 'CREDENTIAL_EXPIRED' },
    });
  });

  it("B's core client presents the chain with B's proof: allowed for the delegated tool, denied for the other", async () => {
    const allowed = await clientB.inspect({ toolName: 'search', arguments: { q: 'agents' } });
    expect(allowed).toMatchObject({ decision: 'allow', reasonCode: null });
    const ran = await clientB.governTool({ name: 'search' }, async (args: { q: string }) => ({
      found: args.q,
    }))({ q: 'gateways' });
    expect(ran).toEqual({ found: 'gateways' });
    const denied = await clientB.inspect({ toolName: 'send_mail', arguments: { to: 'x' } });
    expect(denied).toMatchObject({ decision: 'deny', reasonCode: 'DELEGATION_TOOL_NOT_PERMITTED' });
  });

  it('a link made by `agentiam delegate` for the same inputs has the same document shape, and both verify', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agw-client-delegation-'));
    try {
      const keyFile = join(dir, 'a.jwk');
      const fromFile = join(dir, 'a-identity.json');
      await writeFile(keyFile, JSON.stringify(a.privateKeyJwk), { mode: 0o600 });
      await writeFile(fromFile, JSON.stringify(a.credential));
      const [cli, made] = await Promise.all([
        runCliToEnd([
          'agentiam',
          'delegate',
          '--key-file',
          keyFile,
          '--from',
          fromFile,
          '--to',
          b.publicKey,
          '--to-agent',
          b.id,
          '--tools',
          'search',
          '--ttl',
          '600',
        ]),
        delegate({
          from: { agentId: a.id, privateKeyJwk: a.privateKeyJwk, credential: a.credential },
          to: { agentId: b.id, publicKey: b.publicKey },
          tools: ['search'],
          ttlSeconds: 600,
          tenantId,
        }),
      ]);
      expect(cli.stderr).toEqual([]);
      expect(cli.code).toBe(0);
      const byCli = JSON.parse(cli.stdout.join('\n')) as Record<string, unknown>;
      // Same keys in the same order, same values but for what is unique to each signing.
      expect(JSON.stringify(shapeOf(made))).toBe(JSON.stringify(shapeOf(byCli)));
      for (const credential of [byCli, made]) {
        expect(lifetimeSeconds(credential)).toBe(600);
        const answer = await verify(chainFor(a.credential, credential), 'search');
        expect(answer.body).toMatchObject({ valid: true, depth: 1, agentId: b.id });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it("killing A makes B's chain fail at A's hop, on the verify endpoint and on B's calls", async () => {
    const killKey = await gateway.addApiKey(tenantId, ['agents:kill']);
    // The REST kill switch (docs/kill-switch.md): answers once the kill is applied everywhere.
    const kill = await fetch(
      `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(a.publicKey)}/kill`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${killKey}` },
        body: JSON.stringify({ reason: 'delegation test' }),
      },
    );
    expect(kill.status).toBe(200);
    const answer = await verify(presentation, 'search');
    expect(answer.body).toMatchObject({
      valid: false,
      failure: { hop: 0, code: 'CREDENTIAL_REVOKED' },
    });
    const denied = await clientB.inspect({ toolName: 'search', arguments: { q: 'agents' } });
    expect(denied).toMatchObject({ decision: 'deny', reasonCode: 'CREDENTIAL_REVOKED' });
    expect(clientB.revoked).toBe(false);
  });
});

/** The credential with what differs between two signings (id, dates, signature) blanked. */
function shapeOf(credential: Record<string, unknown>): Record<string, unknown> {
  const proof = credential.proof as Record<string, unknown>;
  return {
    ...credential,
    id: String(credential.id).replace(/^urn:uuid:[0-9a-f-]{36}$/, 'urn:uuid:<uuid>'),
    issuanceDate: '<date>',
    expirationDate: '<date>',
    proof: {
      ...proof,
      created: proof.created === credential.issuanceDate ? '<issuanceDate>' : proof.created,
      proofValue: String(proof.proofValue).replace(/^z[1-9A-HJ-NP-Za-km-z]{80,90}$/, '<z…>'),
    },
  };
}

function lifetimeSeconds(credential: Record<string, unknown>): number {
  const issued = String(credential.issuanceDate);
  expect(issued).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  return (Date.parse(String(credential.expirationDate)) - Date.parse(issued)) / 1000;
}
