// The kill switch in GraphQL: the killAgent mutation (the REST kill's twin, DESIGN.md §7: same
// rules, same answer; the work is the receiver's KillSwitch, injected by the composition as
// `killAgent`, since the control plane never imports the data plane), Agent.kill (the stored
// answer) and the agentEvents subscription (agents of the caller's tenant as they are spawned and
// killed, for consoles, each killed one with its kill as answered).

import { gatewayError } from '../../../shared/errors/index.js';
import { EVENT_TYPES, mapEvents } from '../../../shared/events/index.js';
import { isEd25519PublicKey } from '../../../shared/identity/ed25519-multibase.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { isStorableText } from '../../../shared/text/storable-text.js';
import { invalidField } from '../../../shared/validation/field-issues.js';
import { findKillOfAgent, type KillAnswer } from '../../../storage/tables/agent-kills.js';
import { builder } from '../builder.js';
import { actorOf } from '../context.js';

/** As the REST kill's body: 1–500 characters. */
export const MAX_KILL_REASON_LENGTH = 500;

type Revoked = KillAnswer['revoked'];
type Propagation = KillAnswer['propagation'];

const RevokedRef = builder.objectRef<Revoked>('KillRevocations').implement({
  description: 'What a kill revoked, counted.',
  fields: (t) => ({
    credentials: t.exposeInt('credentials', {
      description: 'Identity credentials revoked (their status-list bits set).',
    }),
    delegations: t.exposeInt('delegations', {
      description: 'Unexpired delegations the agent had issued, as the gateway recorded them.',
    }),
    oauthClients: t.exposeInt('oauthClients', { description: 'OAuth clients revoked.' }),
    tokens: t.exposeInt('tokens', { description: 'Live access tokens revoked.' }),
  }),
});

const PropagationRef = builder.objectRef<Propagation>('KillPropagation').implement({
  description: 'Where the kill was confirmed, as the control plane recorded it.',
  fields: (t) => ({
    dataPlanes: t.exposeInt('dataPlanes', {
      description: 'Data planes connected when the kill was sent (the receiving one included).',
    }),
    confirmed: t.exposeInt('confirmed', {
      description: 'Those that confirmed within the bounded wait.',
    }),
    slowestMs: t.exposeFloat('slowestMs', {
      nullable: true,
      description: 'The slowest confirmation in milliseconds; null when none confirmed.',
    }),
    confirmedBy: t.exposeStringList('confirmedBy', {
      description: 'Names of the data planes that confirmed (local: the process itself).',
    }),
    controlPlaneReached: t.exposeBoolean('controlPlaneReached', {
      description:
        'False when the control plane did not answer in time: only the receiver is known.',
    }),
  }),
});

const AgentKillRef = builder.objectRef<KillAnswer>('AgentKill').implement({
  description:
    'A kill, as its answer was first given: what it revoked, rejected and aborted, the audit ' +
    'entry and where it was confirmed (docs/kill-switch.md).',
  fields: (t) => ({
    agentId: t.exposeID('agentId', { description: 'The killed Agent.id.' }),
    publicKey: t.exposeString('publicKey', { description: "The agent's z6Mk… public key." }),
    killId: t.exposeID('killId', { description: 'The kill’s id.' }),
    killedAt: t.field({
      type: 'DateTime',
      description: 'When the kill was committed.',
      resolve: (kill) => new Date(kill.killedAt),
    }),
    reason: t.exposeString('reason', { description: 'Why, as the first kill gave it.' }),
    revoked: t.field({
      type: RevokedRef,
      description: 'What was revoked.',
      resolve: (kill) => kill.revoked,
    }),
    rejectedApprovals: t.exposeInt('rejectedApprovals', {
      description: 'Pending approvals of the agent rejected.',
    }),
    abortedExecutions: t.exposeInt('abortedExecutions', {
      description: 'In-flight forwards aborted, on every confirming data plane.',
    }),
    auditId: t.exposeID('auditId', { description: 'The agent.killed audit entry.' }),
    propagation: t.field({
      type: PropagationRef,
      description: 'Where the kill was confirmed.',
      resolve: (kill) => kill.propagation,
    }),
  }),
});

builder.prismaObjectFields('Agent', (t) => ({
  kill: t.field({
    type: AgentKillRef,
    nullable: true,
    description: 'The kill of this agent as answered; null while it lives (or its kill completes).',
    resolve: async (agent, _args, context) =>
      (await findKillOfAgent(context.db, agent.tenantId, agent.id))?.answer ?? null,
  }),
}));

builder.mutationField('killAgent', (t) =>
  t.field({
    type: AgentKillRef,
    description:
      'Kills an agent of the tenant everywhere (the REST kill): marks it killed, revokes its ' +
      'credentials, the delegations it issued, its OAuth clients and live tokens, rejects its ' +
      'pending approvals, aborts its in-flight calls on every data plane and audits ' +
      'agent.killed. Name the agent by agentId or publicKey (exactly one). Killing a killed ' +
      'agent answers the original kill and changes nothing.',
    authScopes: { scope: SCOPES.AGENTS_KILL },
    args: {
      agentId: t.arg.id({ description: 'The Agent.id (or give publicKey).' }),
      publicKey: t.arg.string({ description: "The agent's z6Mk… public key (or give agentId)." }),
      reason: t.arg.string({
        required: true,
        description: `Why; 1 to ${MAX_KILL_REASON_LENGTH} characters, recorded and audited.`,
      }),
    },
    resolve: async (_root, args, context) => {
      const agentId = args.agentId == null ? undefined : String(args.agentId);
      const publicKey = args.publicKey ?? undefined;
      if ((agentId === undefined) === (publicKey === undefined)) {
        throw invalidField('agentId', 'give exactly one of agentId and publicKey');
      }
      if (
        publicKey !== undefined &&
        (!publicKey.startsWith('z6Mk') || !isEd25519PublicKey(publicKey))
      ) {
        throw invalidField(
          'publicKey',
          'must be an Ed25519 public key in the z6Mk… multibase form',
        );
      }
      if (agentId !== undefined && (agentId.length > 256 || !isStorableText(agentId))) {
        throw gatewayError('NOT_FOUND', { resource: 'agent in this tenant' }, { hintFor: 'agent' });
      }
      const reason = args.reason;
      if (reason.trim().length === 0) throw invalidField('reason', 'must not be empty');
      if (reason.length > MAX_KILL_REASON_LENGTH) {
        throw invalidField('reason', `must be at most ${MAX_KILL_REASON_LENGTH} characters`);
      }
      if (!isStorableText(reason)) {
        throw invalidField('reason', 'must not contain NUL characters or unpaired surrogates');
      }
      if (!context.killAgent) throw gatewayError('INTERNAL_ERROR');
      return context.killAgent({
        tenantId: context.caller.tenantId,
        target: agentId !== undefined ? { agentId } : { publicKey: publicKey as string },
        reason,
        actor: actorOf(context.caller),
      });
    },
  }),
);

// Agents as they change, for consoles: tenant from the caller's key, never from the client.
const AgentChangeEnum = builder.enumType('AgentChange', {
  description: 'What happened to the agent.',
  values: {
    SPAWNED: { value: 'spawned', description: 'The agent was spawned.' },
    KILLED: { value: 'killed', description: 'The agent was killed; its kill has completed.' },
  } as const,
});

interface AgentEventShape {
  readonly change: 'spawned' | 'killed';
  readonly agentId: string;
}

const AgentEventRef = builder.objectRef<AgentEventShape>('AgentEvent').implement({
  description: 'An agent of the tenant was spawned or killed.',
  fields: (t) => ({
    change: t.field({
      type: AgentChangeEnum,
      description: 'Spawned or killed.',
      resolve: (event) => event.change,
    }),
    agentId: t.exposeID('agentId', { description: 'The Agent.id.' }),
    agent: t.prismaField({
      type: 'Agent',
      description: 'The agent as it is when the event is delivered.',
      resolve: (query, event, _args, context) =>
        context.db.prisma.agent.findFirstOrThrow({
          ...query,
          where: { id: event.agentId, tenantId: context.caller.tenantId },
        }),
    }),
    kill: t.field({
      type: AgentKillRef,
      nullable: true,
      description: 'For KILLED: the kill as answered.',
      resolve: async (event, _args, context) =>
        event.change === 'killed'
          ? ((await findKillOfAgent(context.db, context.caller.tenantId, event.agentId))?.answer ??
            null)
          : null,
    }),
  }),
});

builder.subscriptionField('agentEvents', (t) =>
  t.field({
    type: AgentEventRef,
    description: "Agents of the caller's tenant as they are spawned and killed.",
    authScopes: { scope: SCOPES.AGENTS_MANAGE },
    args: {
      change: t.arg({ type: AgentChangeEnum, description: 'Only this kind of change.' }),
    },
    subscribe: (_root, args, context) => {
      const tenantId = context.caller.tenantId;
      const change = args.change ?? null;
      return mapEvents(
        context.events.subscribe(
          (event) =>
            event.type === EVENT_TYPES.AGENT_CHANGED &&
            event.tenantId === tenantId &&
            (change === null || event.agent.change === change),
        ),
        (event): AgentEventShape | undefined =>
          event.type === EVENT_TYPES.AGENT_CHANGED
            ? { change: event.agent.change, agentId: event.agent.id }
            : undefined,
      );
    },
    resolve: (event) => event,
  }),
);
