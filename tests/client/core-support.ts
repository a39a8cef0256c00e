// Shared by the core client tests: a spawn-capable test gateway with a policy that allows,
// blocks (text "secret") and holds (text starting "pay") calls of `echo`, a server `sim` with a
// mock result, GraphQL approvals, the kill switch's REST route, and a counting HTTP proxy in
// front of the gateway that can answer a scripted status first (a busy or unavailable gateway).
import { createServer, type Server } from 'node:http';
import type { Ed25519PrivateJwk, GatewayClientConfig } from '../../client/src/index.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import { graphql } from '../control-plane/graphql/support.js';
import {
  type SpawnTestGateway,
  spawnBody,
  startSpawnGateway,
} from '../control-plane/spawn/support.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';
import { RUNTIME_BUS_SUBSCRIPTIONS } from '../support/gateway.js';

export const CLIENT_POLICY = {
  version: '1.0.0',
  policyName: 'client-core-rules',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_secrets',
      action: 'BLOCK',
      condition: "tool.name == 'echo' && args.text == 'secret'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'hold_payments',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'echo' && args.text.startsWith('pay')",
      alertSeverity: 'MEDIUM',
    },
  ],
};

export const SIM_MOCK = { content: [{ type: 'text', text: 'mocked echo' }] };

export interface SpawnedAgent {
  readonly id: string;
  readonly publicKey: string;
  readonly privateKeyJwk: Ed25519PrivateJwk;
  readonly credentialId: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface ClientTestGateway {
  readonly gateway: SpawnTestGateway;
  readonly policyUri: string;
  readonly adminKey: string;
  spawnAgent(overrides?: Record<string, unknown>): Promise<SpawnedAgent>;
  approve(approvalId: string): Promise<void>;
  reject(approvalId: string, reason: string): Promise<void>;
  kill(publicKey: string): Promise<void>;
  /** Resolves once `count` long-polls (beyond the runtime's own subscription) are waiting. */
  pollsWaiting(count?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startClientGateway(): Promise<ClientTestGateway> {
  const gateway = await startSpawnGateway(quickDatabaseKind);
  const tenantId = gateway.tenant.id;
  const policyUri = await gateway.publishPolicy(tenantId, CLIENT_POLICY);
  await gateway.registerServer({
    tenantId,
    serverId: 'sim',
    url: 'http://127.0.0.1:9/',
    mockResults: { echo: SIM_MOCK },
  });
  await gateway.setPolicy(tenantId, {
    trustedServers: ['files', 'sim'],
    allowedModes: ['production', 'simulation', 'shadow'],
  });
  const adminKey = await gateway.addApiKey(tenantId, [...ALL_SCOPES]);
  const mutate = async (query: string, variables: Record<string, unknown>) => {
    const answer = await graphql(gateway.url, adminKey, query, variables);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
  };
  return {
    gateway,
    policyUri,
    adminKey,
    async spawnAgent(overrides = {}) {
      const answer = await gateway.spawn(
        spawnBody({ allowed_tools: ['echo', 'search'], ...overrides }),
      );
      if (answer.status !== 201) throw new Error(`spawn: ${answer.text}`);
      const { body } = answer;
      return {
        id: body.agent.id,
        publicKey: body.agent.publicKey,
        privateKeyJwk: body.private_key_jwk,
        credentialId: body.credentialId,
        clientId: body.oauth.client_id,
        clientSecret: body.oauth.client_secret,
      };
    },
    approve: (id) => mutate('mutation($id: ID!) { approveApproval(id: $id) { id } }', { id }),
    reject: (id, reason) =>
      mutate('mutation($id: ID!, $r: String) { rejectApproval(id: $id, reason: $r) { id } }', {
        id,
        r: reason,
      }),
    async kill(publicKey) {
      const response = await fetch(
        `${gateway.url}/api/v2/infrastructure/agents/${publicKey}/kill`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ reason: 'client test' }),
        },
      );
      if (response.status !== 200) throw new Error(`kill: ${await response.text()}`);
    },
    async pollsWaiting(count = 1) {
      while (gateway.runtime.events.subscriberCount < RUNTIME_BUS_SUBSCRIPTIONS + count) {
        await new Promise((next) => setTimeout(next, 1));
      }
    },
    close: () => gateway.close(),
  };
}

export interface CountingProxy {
  readonly url: string;
  /** Requests received, scripted or forwarded. */
  readonly requests: number;
  readonly paths: readonly string[];
  /** Answers the next requests with these statuses (and headers) before forwarding again. */
  script(...answers: { status: number; headers?: Record<string, string>; body?: unknown }[]): void;
  close(): Promise<void>;
}

/** A plain HTTP proxy in front of `target` that counts what passes and can play a busy gateway. */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const queue: { status: number; headers?: Record<string, string>; body?: unknown }[] = [];
  const paths: string[] = [];
  let requests = 0;
  const server: Server = createServer(async (req, res) => {
    requests++;
    paths.push(req.url ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const scripted = queue.shift();
    if (scripted) {
      res.writeHead(scripted.status, {
        'content-type': 'application/json',
        ...scripted.headers,
      });
      res.end(JSON.stringify(scripted.body ?? { reasonCode: 'BUSY', message: 'scripted' }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'content-length') {
        headers[name] = value;
      }
    }
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    paths,
    script(...answers) {
      queue.push(...answers);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A client configuration for `who` against the test gateway (server `files` by default). */
export function clientConfigFor(
  t: ClientTestGateway,
  who: SpawnedAgent,
  extra: Partial<GatewayClientConfig> = {},
): GatewayClientConfig {
  return {
    tenantId: t.gateway.tenant.id,
    agentId: who.id,
    apiKey: t.gateway.tenant.key,
    baseUrl: t.gateway.url,
    policy: t.policyUri,
    serverId: 'files',
    ...extra,
  };
}
