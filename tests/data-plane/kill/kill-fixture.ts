// A scene for the kill switch's tests: a real single-process gateway (PGlite or PostgreSQL) with a
// real MCP SDK upstream registered as `files`, a hold policy (tool `write` needs approval), and a
// victim agent holding everything a kill must revoke: a real `z6Mk…` key, an identity credential
// signed by the tenant CA, an OAuth client and a live access token, a delegation it issued (root
// → victim → delegate), and keys with and without agents:kill. Only the gateway's code runs.
import { randomBytes } from 'node:crypto';
import { createAgent } from '../../../control-plane/services/agents.js';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import { asAgentId } from '../../../shared/ids.js';
import {
  agentIamServices,
  delegate,
  issueCredential,
  type KeyedAgent,
  verifyChainOverHttp,
} from '../../support/agentiam-client.js';
import type { DatabaseKindUnderTest } from '../../support/databases.js';
import { postAsClient, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { HOLD_POLICY } from '../../support/npl-policies.js';
import { basic, postForm, registerClientOf } from '../oauth/oauth-fixture.js';

export interface ClientOfAgent {
  readonly clientId: string;
  readonly secret: string;
}

export interface KillScene {
  readonly gateway: TestGateway;
  readonly upstream: McpUpstream;
  readonly tenantId: string;
  /** agents:kill only. */
  readonly killKey: string;
  /** agents:execute (the tenant's first key). */
  readonly executeKey: string;
  /** Every scope but agents:kill. */
  readonly noKillKey: string;
  addVictim(): Promise<Victim>;
  close(): Promise<void>;
}

export interface Victim extends KeyedAgent {
  readonly credential: Record<string, unknown>;
  readonly client: ClientOfAgent;
  readonly token: string;
  /** root → victim → delegate, with the root's credential: verifies until the kill. */
  readonly chain: { root_credential: unknown; delegation_chain: unknown[]; requested_tool: string };
  /**
   * Another agent's client of the tenant: introspects the victim's token once the victim's own
   * client is refused (it sees another client's token inactive in any case).
   */
  readonly observer: ClientOfAgent;
}

export async function startKillScene(kind: DatabaseKindUnderTest): Promise<KillScene> {
  const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true, blockTool: true });
  const gateway = await startTestGateway(kind);
  agentIamServices(gateway);
  const tenantId = gateway.tenant.id;
  await gateway.registerServer({
    tenantId,
    serverId: 'files',
    url: upstream.url,
    mockResults: { write: { ok: 1 }, echo: { ok: 1 } },
  });
  const hold = await gateway.publishPolicy(tenantId, HOLD_POLICY);
  await gateway.setPolicy(tenantId, { trustedServers: ['files'], pinnedPolicies: [hold] });
  const killKey = await gateway.addApiKey(tenantId, ['agents:kill']);
  const noKillKey = await gateway.addApiKey(tenantId, [
    'agents:execute',
    'agents:manage',
    'approvals:decide',
    'audit:read',
  ]);

  const addKeyed = async (): Promise<KeyedAgent> => {
    const key = generateEd25519KeyMaterial();
    const { id } = await createAgent(gateway.db, {
      tenantId,
      name: `agent-${randomBytes(3).toString('hex')}`,
      allowedTools: ['*'],
      mcpAudiences: ['mcp://files'],
      publicKey: key.publicKeyMultibase,
    });
    return { id: asAgentId(id), tenantId, key };
  };
  const addClient = async (agentId: string): Promise<ClientOfAgent> => {
    const { clientId, secret } = await registerClientOf(gateway, { tenantId, agentId });
    return { clientId, secret: secret as string };
  };

  return {
    gateway,
    upstream,
    tenantId,
    killKey,
    executeKey: gateway.tenant.key,
    noKillKey,
    async addVictim() {
      const root = await addKeyed();
      const victim = await addKeyed();
      const delegateAgent = await addKeyed();
      await gateway.sync();
      const rootCredential = await issueCredential(gateway, root);
      const credential = await issueCredential(gateway, victim);
      const expiresAt = new Date(Date.now() + 3600_000);
      const rootToVictim = await delegate({
        tenantId,
        from: root,
        to: victim,
        tools: ['echo'],
        expiresAt,
      });
      const victimToDelegate = await delegate({
        tenantId,
        from: victim,
        to: delegateAgent,
        tools: ['echo'],
        expiresAt,
      });
      const chain = {
        root_credential: rootCredential,
        delegation_chain: [rootToVictim, victimToDelegate],
        requested_tool: 'echo',
      };
      // Verified once before the kill: the data plane records the links it verified, and the
      // kill revokes the one the victim issued.
      const verified = await verifyChainOverHttp(gateway, chain);
      if (verified.body.valid !== true) {
        throw new Error(`chain not valid: ${JSON.stringify(verified.body)}`);
      }
      await gateway.runtime.delegationLinks.flush();
      const recorded = await gateway.db.query<{ id: string }>(
        `select id from delegation_links where "tenantId" = $1 and "issuerAgentId" = $2`,
        [tenantId, victim.id],
      );
      if (recorded.length !== 1) throw new Error('the verified delegation link was not recorded');
      const client = await addClient(victim.id);
      const observer = await addClient(root.id);
      await gateway.sync();
      const token = await tokenFor(gateway, client);
      if (token.status !== 200) throw new Error(`no token: ${JSON.stringify(token.body)}`);
      await gateway.runtime.issuedTokens.flush();
      return {
        ...victim,
        credential,
        client,
        token: token.body.access_token as string,
        chain,
        observer,
      };
    },
    async close() {
      await gateway.close();
      await upstream.close();
    },
  };
}

export function tokenFor(gateway: TestGateway, client: ClientOfAgent) {
  return postForm(
    `${gateway.url}/oauth/token`,
    { grant_type: 'client_credentials', resource: 'mcp://files' },
    { authorization: basic(client.clientId, client.secret) },
  );
}

export function introspect(gateway: TestGateway, observer: ClientOfAgent, token: string) {
  return postForm(
    `${gateway.url}/oauth/introspect`,
    { token },
    { authorization: basic(observer.clientId, observer.secret) },
  );
}

/** POST the kill with `key` (null: no Authorization) and a raw or JSON body. */
export async function postKill(
  gateway: TestGateway,
  publicKey: string,
  body: unknown,
  key: string | null,
  init: { contentType?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await postAsClient(
    `${gateway.url}/api/v2/infrastructure/agents/${encodeURIComponent(publicKey)}/kill`,
    body,
    { key, ...init },
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
