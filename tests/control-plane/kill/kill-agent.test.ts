// GraphQL killAgent and the agentEvents subscription against a real gateway, on both databases:
// the mutation answers as the REST kill does (by agentId or by publicKey), idempotently; every
// bad argument is refused with its code and leaves the agent alive and unaudited; a console
// subscribed over graphql-ws (a real client on a real WebSocket) receives the KILLED event with
// the kill, and another tenant's console receives nothing.
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import { type KillScene, postKill, startKillScene } from '../../data-plane/kill/kill-fixture.js';
import { describeEachDatabase } from '../../support/databases.js';
import { errorCodes, graphql, type Loose } from '../graphql/support.js';

const KILL = `mutation($agentId: ID, $publicKey: String, $reason: String!) {
  killAgent(agentId: $agentId, publicKey: $publicKey, reason: $reason) {
    agentId publicKey killId killedAt reason auditId rejectedApprovals abortedExecutions
    revoked { credentials delegations oauthClients tokens }
    propagation { dataPlanes confirmed slowestMs confirmedBy controlPlaneReached }
  }
}`;
const AGENT_EVENTS = `subscription { agentEvents {
  change agentId agent { id status killedReason } kill { killId reason auditId }
} }`;

describeEachDatabase('GraphQL killAgent and agentEvents', (kind) => {
  let scene: KillScene;
  let killKey: string;
  let manageKey: string;
  const clients: Client[] = [];
  beforeAll(async () => {
    scene = await startKillScene(kind);
    killKey = await scene.gateway.addApiKey(scene.tenantId, ['agents:kill', 'agents:manage']);
    manageKey = await scene.gateway.addApiKey(scene.tenantId, ['agents:manage']);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await scene?.close();
  });

  const kill = (variables: Record<string, unknown>, key = killKey) =>
    graphql<Record<string, Loose>>(scene.gateway.url, key, KILL, variables);

  async function expectUntouched(agentId: string) {
    const agent = await scene.gateway.db.prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
    expect(agent.status).toBe('active');
    expect(await scene.gateway.db.prisma.agentKill.count({ where: { agentId } })).toBe(0);
    await scene.gateway.runtime.audit.flush();
    const audited = await scene.gateway.db.prisma.auditEntry.count({
      where: { action: 'agent.killed', resourceId: agentId },
    });
    expect(audited).toBe(0);
  }

  it('kills by agentId, answers as REST does, and a repeat (by publicKey, REST) answers the same kill', async () => {
    const victim = await scene.addVictim();
    const answer = await kill({ agentId: victim.id, reason: 'graphql kill' });
    expect(answer.errors).toBeUndefined();
    const killed = answer.data?.killAgent;
    expect(killed).toMatchObject({
      agentId: victim.id,
      publicKey: victim.key.publicKeyMultibase,
      reason: 'graphql kill',
      revoked: { credentials: 1, delegations: 1, oauthClients: 1, tokens: 1 },
      rejectedApprovals: 0,
      abortedExecutions: 0,
      propagation: {
        dataPlanes: 1,
        confirmed: 1,
        confirmedBy: ['local'],
        controlPlaneReached: true,
      },
    });
    const read = await graphql<Record<string, Loose>>(
      scene.gateway.url,
      killKey,
      'query($id: ID!) { agent(id: $id) { status kill { killId auditId reason } } }',
      { id: victim.id },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data?.agent).toEqual({
      status: 'killed',
      kill: { killId: killed.killId, auditId: killed.auditId, reason: 'graphql kill' },
    });
    const again = await kill({ publicKey: victim.key.publicKeyMultibase, reason: 'again' });
    expect(again.data?.killAgent).toEqual(killed);
    const rest = await postKill(
      scene.gateway,
      victim.key.publicKeyMultibase,
      { reason: 'x' },
      scene.killKey,
    );
    expect(rest.status).toBe(200);
    expect({
      ...rest.body,
      killedAt: new Date(rest.body.killedAt as string).toISOString(),
    }).toEqual({
      ...killed,
      killedAt: new Date(killed.killedAt).toISOString(),
    });
  });

  it('refuses bad arguments with their code and writes nothing', async () => {
    const victim = await scene.addVictim();
    const other = await scene.gateway.addTenant();
    const otherKey = await scene.gateway.addApiKey(other.id, ['agents:kill']);
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ reason: 'neither' }, 'REQUEST_INVALID'],
      [
        { agentId: victim.id, publicKey: victim.key.publicKeyMultibase, reason: 'both' },
        'REQUEST_INVALID',
      ],
      [{ publicKey: 'not-a-key', reason: 'bad key' }, 'REQUEST_INVALID'],
      [{ agentId: victim.id, reason: '' }, 'REQUEST_INVALID'],
      [{ agentId: victim.id, reason: '   ' }, 'REQUEST_INVALID'],
      [{ agentId: victim.id, reason: 'x'.repeat(501) }, 'REQUEST_INVALID'],
      [{ agentId: victim.id, reason: 'nul \u0000' }, 'REQUEST_INVALID'],
      [{ agentId: 'no-such-agent', reason: 'unknown' }, 'NOT_FOUND'],
      [
        { publicKey: generateEd25519KeyMaterial().publicKeyMultibase, reason: 'unknown' },
        'AGENT_NOT_FOUND',
      ],
      [{ agentId: victim.id, reason: 'other tenant' }, 'NOT_FOUND', otherKey],
      [
        { publicKey: victim.key.publicKeyMultibase, reason: 'other tenant' },
        'AGENT_NOT_FOUND',
        otherKey,
      ],
      [{ agentId: victim.id, reason: 'no scope' }, 'AUTH_INSUFFICIENT_SCOPE', manageKey],
    ];
    for (const [variables, code, key] of cases) {
      const answer = await kill(variables, key);
      expect({ variables, codes: errorCodes(answer) }).toEqual({ variables, codes: [code] });
      expect(answer.data?.killAgent ?? null).toBeNull();
    }
    await expectUntouched(victim.id);
  });

  it('agentEvents: a console receives KILLED with the kill; another tenant’s console receives nothing', async () => {
    const other = await scene.gateway.addTenant();
    const otherKey = await scene.gateway.addApiKey(other.id, ['agents:manage']);
    const connect = (key: string) => {
      const client = createClient({
        url: `${scene.gateway.url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${key}` },
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      return client;
    };
    const foreign: unknown[] = [];
    const stopForeign = connect(otherKey).subscribe(
      { query: AGENT_EVENTS },
      { next: (value) => foreign.push(value), error: () => {}, complete: () => {} },
    );
    const events = scene.gateway.runtime.events;
    const subscribers = events.subscriberCount;
    const received = new Promise<Loose>((resolve, reject) => {
      connect(manageKey).subscribe(
        { query: AGENT_EVENTS },
        { next: resolve, error: reject, complete: () => {} },
      );
    });
    // Both subscriptions are live on the server (the bus counts them) before the kill.
    while (events.subscriberCount < subscribers + 2) await new Promise((r) => setTimeout(r, 2));
    const victim = await scene.addVictim();
    const answer = await kill({ agentId: victim.id, reason: 'console sees it' });
    expect(answer.errors).toBeUndefined();
    const event = await received;
    expect(event).toEqual({
      data: {
        agentEvents: {
          change: 'KILLED',
          agentId: victim.id,
          agent: { id: victim.id, status: 'killed', killedReason: 'console sees it' },
          kill: {
            killId: answer.data?.killAgent.killId,
            reason: 'console sees it',
            auditId: answer.data?.killAgent.auditId,
          },
        },
      },
    });
    stopForeign();
    expect(foreign).toEqual([]);
  });
});

describe('agentEvents scope', () => {
  it('is declared agents:manage', async () => {
    const { schema } = await import('../../../control-plane/graphql/schema/index.js');
    const field = schema.getSubscriptionType()?.getFields().agentEvents;
    const options = field?.extensions?.pothosOptions as { authScopes?: { scope?: string } };
    expect(options.authScopes?.scope).toBe('agents:manage');
  });
});
