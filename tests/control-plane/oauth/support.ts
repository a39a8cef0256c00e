// OAuth registration tests: a test gateway with a manager key (agents:manage), two MCP servers
// and an agent with a real Ed25519 key whose mcpAudiences name both, and POST /oauth/register
// over real HTTP.
import { randomBytes } from 'node:crypto';
import { createAgent } from '../../../control-plane/services/agents.js';
import { type AgentId, asAgentId } from '../../../shared/ids.js';
import { newAgentPublicKey } from '../../support/agent-keys.js';
import type { DatabaseKindUnderTest } from '../../support/databases.js';
import { postAsClient, startTestGateway, type TestGateway } from '../../support/gateway.js';

export interface RegisterAnswer {
  readonly status: number;
  readonly cacheControl: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: the assertions check the shape at run time
  readonly body: any;
}

export interface OAuthTestGateway extends TestGateway {
  /** An API key of the first tenant with agents:manage only. */
  readonly managerKey: string;
  /** An agent of the first tenant with a z6Mk key and mcpAudiences mcp://files, mcp://mail. */
  readonly agentId: AgentId;
  /** An agent of `tenantId` with a real key; `audiences` must name registered servers. */
  addKeyedAgent(tenantId: string, audiences: string[]): Promise<AgentId>;
  /** POST /oauth/register with the manager key (or `key`; null: no Authorization). */
  register(
    body: unknown,
    init?: { key?: string | null; contentType?: string },
  ): Promise<RegisterAnswer>;
}

export async function startOAuthTestGateway(
  kind: DatabaseKindUnderTest,
): Promise<OAuthTestGateway> {
  const gateway = await startTestGateway(kind);
  const tenantId = gateway.tenant.id;
  for (const serverId of ['files', 'mail']) {
    await gateway.registerServer({ tenantId, serverId, url: 'http://127.0.0.1:9/' });
  }
  const managerKey = await gateway.addApiKey(tenantId, ['agents:manage']);
  const addKeyedAgent = async (owner: string, audiences: string[]) => {
    const { id } = await createAgent(gateway.db, {
      tenantId: owner,
      name: `oauth-${randomBytes(3).toString('hex')}`,
      allowedTools: ['*'],
      mcpAudiences: audiences,
      publicKey: newAgentPublicKey(),
    });
    await gateway.sync();
    return asAgentId(id);
  };
  const agentId = await addKeyedAgent(tenantId, ['mcp://files', 'mcp://mail']);
  return {
    ...gateway,
    managerKey,
    agentId,
    addKeyedAgent,
    async register(body, init = {}) {
      const key = init.key === undefined ? managerKey : init.key;
      const response = await postAsClient(`${gateway.url}/oauth/register`, body, {
        key,
        contentType: init.contentType,
      });
      return {
        status: response.status,
        cacheControl: response.headers.get('cache-control'),
        body: await response.json(),
      };
    },
  };
}
