// The receiver's side of the kill switch (DESIGN.md §7; the contract's steps 1, 2, 4, 5): whichever
// process takes a kill — a data plane's REST route, the control plane's GraphQL killAgent through
// injection — commits it (storage/tables/agent-kills.ts), applies it locally at once, tells the bus, waits
// a bounded time for the control plane's fan-out to report the propagation, audits agent.killed
// once (durable before the answer), stores the answer and tells consoles.
//
// With the control plane away the kill still reaches every data plane, through the database:
// each data plane hears AGENT_KILL_COMMITTED on the PostgreSQL event bus (and polls the kill table
// while its stream is down), applies the kill from the table and says so (AGENT_KILL_CONFIRMED).
// The receiver collects those confirmations while it waits; when its own stream says the control
// plane is unreachable it waits only the acknowledgement time, not the full propagation wait.
//
// Idempotency: a completed kill answers its stored answer and changes nothing. A kill committed
// but never completed (its receiver died, or is still waiting elsewhere) is completed by the next
// request: after waiting for the other receiver's AGENT_CHANGED a bounded time, so a double click
// does not audit twice. In this process, a second request for a kill under way awaits the first.

import type { Logger } from 'pino';
import { unknownAgent } from '../../shared/agents/unknown-agent.js';
import { AUDIT_ACTIONS, type JsonObject, pageIds } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import {
  EVENT_TYPES,
  type EventBus,
  followEvents,
  type GatewayEvent,
  type KillPropagation,
} from '../../shared/events/index.js';
import { asAgentId, asApprovalId, asTenantId } from '../../shared/ids.js';
import type { Database } from '../../storage/engine/database.js';
import {
  type CommitKillOutcome,
  commitKill,
  completeKill,
  findKillBySeq,
  type KillAnswer,
  type KillRecord,
  type KillRevokedIds,
  type KillTarget,
  listKillRevokedIds,
} from '../../storage/tables/agent-kills.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import { killDeltaOf } from '../../storage/tables/kill-deltas.js';
import type { KillApplier } from './apply-kill.js';

/** Default bounded wait for the control plane's AGENT_KILL_PROPAGATED. */
export const DEFAULT_PROPAGATION_WAIT_MS = 2000;

export interface KillRequest {
  readonly tenantId: string;
  readonly target: KillTarget;
  readonly reason: string;
  /** `api_key:<id>`. */
  readonly actor: string;
}

export interface KillOutcome {
  /** False when the agent was killed before: the answer is the original kill's. */
  readonly created: boolean;
  readonly answer: KillAnswer;
}

export interface KillSwitchOptions {
  readonly db: Database;
  readonly audit: Pick<AuditWriter, 'append'>;
  readonly events: Pick<EventBus, 'publish' | 'publishMany' | 'subscribe'>;
  readonly applier: KillApplier;
  /** This process's name: `receivedBy`, and the confirmation when the control plane is away. */
  readonly processName: string;
  /** Bounded wait for the fan-out's propagation (default 2000 ms). */
  readonly propagationWaitMs?: number;
  /** Wait for data planes' database-path confirmations when the control plane is away (250 ms). */
  readonly confirmationWaitMs?: number;
  readonly logger: Logger;
}

export class KillSwitch {
  readonly #options: KillSwitchOptions;
  readonly #waitMs: number;
  /** Kills being completed by this process, by agent id. */
  readonly #underWay = new Map<string, Promise<KillOutcome>>();
  /** Whether this process's configuration stream is live; unset: assume it is. */
  #controlPlaneLive: () => boolean = () => true;

  constructor(options: KillSwitchOptions) {
    this.#options = options;
    this.#waitMs = options.propagationWaitMs ?? DEFAULT_PROPAGATION_WAIT_MS;
  }

  /** A data plane tells the kill switch how to know the control plane is unreachable. */
  setControlPlaneLive(live: () => boolean): void {
    this.#controlPlaneLive = live;
  }

  /** Kills the agent; AGENT_NOT_FOUND (by public key) or NOT_FOUND (by id) outside the tenant. */
  async kill(request: KillRequest): Promise<KillOutcome> {
    const committed = await commitKill(this.#options.db, {
      tenantId: request.tenantId,
      target: request.target,
      reason: request.reason,
      killedBy: request.actor,
      receivedBy: this.#options.processName,
    });
    if (committed === undefined) throw notFound(request.target);
    const { kill } = committed;
    if (kill.answer !== null) return { created: false, answer: kill.answer };
    const underWay = this.#underWay.get(kill.agentId);
    if (underWay) return { created: false, answer: (await underWay).answer };
    const completion = this.#complete(committed, request.actor);
    this.#underWay.set(kill.agentId, completion);
    try {
      return await completion;
    } finally {
      this.#underWay.delete(kill.agentId);
    }
  }

  async #complete(committed: CommitKillOutcome, actor: string): Promise<KillOutcome> {
    const { db, events, applier } = this.#options;
    const { kill } = committed;
    if (!committed.created) {
      // Another receiver may be completing it: give it the time a kill takes, then take over.
      const completed = await this.#awaitOtherReceiver(kill);
      if (completed) return { created: false, answer: completed };
    }
    const tenantId = asTenantId(kill.tenantId);
    const agentId = asAgentId(kill.agentId);
    const reference = { id: kill.id, seq: kill.seq, agentId };
    // Subscribed before the commit is announced: the propagation cannot slip past.
    const waitMs = this.#controlPlaneLive()
      ? this.#waitMs
      : Math.min(this.#waitMs, this.#options.confirmationWaitMs ?? 250);
    const confirmations = new Map<string, number>();
    const stopConfirmations = this.#collectConfirmations(kill.id, confirmations);
    const propagated =
      kill.propagation === null ? this.#awaitPropagation(kill.id, waitMs) : Promise.resolve(null);
    const { aborted: abortedHere } = applier.apply(killDeltaOf(kill, []));
    // Read while the propagation is awaited: the ids the audit entry lists.
    const revokedIds = listKillRevokedIds(db, kill);
    revokedIds.catch(() => {});
    if (committed.created) {
      events.publishMany(
        committed.rejectedApprovalIds.map(
          (id): GatewayEvent => ({
            type: EVENT_TYPES.APPROVAL_RESOLVED,
            tenantId,
            approval: { id: asApprovalId(id), agentId, status: 'rejected' },
          }),
        ),
      );
    }
    if (kill.propagation === null) {
      events.publish({ type: EVENT_TYPES.AGENT_KILL_COMMITTED, tenantId, kill: reference });
    }
    const fannedOut = kill.propagation ?? (await propagated) ?? this.#receiverOnly();
    await stopConfirmations();
    // This process is a data plane the fan-out may have counted too: merged, not added.
    confirmations.set(
      this.#options.processName,
      Math.max(confirmations.get(this.#options.processName) ?? 0, abortedHere),
    );
    const propagation = withConfirmations(fannedOut, confirmations);
    const abortedExecutions = propagation.abortedExecutions;
    const answerPropagation = {
      dataPlanes: propagation.dataPlanes,
      confirmed: propagation.confirmed,
      slowestMs: propagation.slowestMs,
      confirmedBy: propagation.confirmedBy,
      controlPlaneReached: propagation.controlPlaneReached,
    };
    const entry = await this.#audit(kill, actor, await revokedIds, {
      abortedExecutions,
      propagation: { ...answerPropagation, confirmedBy: [...propagation.confirmedBy] },
    });
    const answer = await completeKill(db, kill.seq, {
      agentId: kill.agentId,
      publicKey: kill.publicKey,
      killId: kill.id,
      killedAt: kill.killedAt.toISOString(),
      reason: kill.reason,
      revoked: kill.revoked,
      rejectedApprovals: kill.rejectedApprovals,
      abortedExecutions,
      auditId: entry.id,
      propagation: answerPropagation,
    });
    events.publish({
      type: EVENT_TYPES.AGENT_CHANGED,
      tenantId,
      agent: { id: agentId, change: 'killed' },
    });
    return { created: committed.created, answer };
  }

  /**
   * Appends `agent.killed` naming every id the kill revoked or rejected, at most MAX_IDS_PER_ENTRY
   * of each kind, and an `agent.killed_continued` entry per further page, referencing it; resolves
   * with the kill's entry once all are durable.
   */
  async #audit(
    kill: KillRecord,
    actor: string,
    ids: KillRevokedIds,
    outcome: { abortedExecutions: number; propagation: JsonObject },
  ) {
    const { audit } = this.#options;
    const [first, ...rest] = pageIds(ids);
    const page = (ids: NonNullable<typeof first>): JsonObject => ({
      revokedIds: {
        credentials: ids.credentials,
        delegations: ids.delegations,
        oauthClients: ids.oauthClients,
        tokens: ids.tokens,
      },
      rejectedApprovalIds: ids.rejectedApprovals,
    });
    const entry = await audit.append({
      tenantId: kill.tenantId,
      action: AUDIT_ACTIONS.AGENT_KILLED,
      resourceType: 'agent',
      resourceId: kill.agentId,
      metadata: {
        actorType: 'operator',
        actor,
        killId: kill.id,
        publicKey: kill.publicKey,
        reason: kill.reason,
        receivedBy: kill.receivedBy,
        revoked: { ...kill.revoked },
        rejectedApprovals: kill.rejectedApprovals,
        ...page(first!),
        continuedIn: rest.length,
        abortedExecutions: outcome.abortedExecutions,
        propagation: outcome.propagation,
      },
    });
    await Promise.all(
      rest.map((ids, index) =>
        audit.append({
          tenantId: kill.tenantId,
          action: AUDIT_ACTIONS.AGENT_KILLED_CONTINUED,
          resourceType: 'agent',
          resourceId: kill.agentId,
          metadata: {
            actorType: 'operator',
            actor,
            killId: kill.id,
            killEntryId: entry.id,
            part: index + 1,
            parts: rest.length,
            ...page(ids),
          },
        }),
      ),
    );
    return entry;
  }

  /** The fan-out's propagation of this kill, or null after the bounded wait. */
  #awaitPropagation(killId: string, waitMs: number): Promise<KillPropagation | null> {
    const subscription = this.#options.events.subscribe(
      (event) => event.type === EVENT_TYPES.AGENT_KILL_PROPAGATED && event.kill.id === killId,
    );
    return firstWithin(subscription, waitMs).then((event) =>
      event?.type === EVENT_TYPES.AGENT_KILL_PROPAGATED ? event.propagation : null,
    );
  }

  /**
   * Collects the data planes' database-path confirmations of this kill (name → aborted) until the
   * returned function is called.
   */
  #collectConfirmations(killId: string, into: Map<string, number>): () => Promise<void> {
    const own = this.#options.processName;
    return followEvents(
      this.#options.events,
      EVENT_TYPES.AGENT_KILL_CONFIRMED,
      (event) => {
        if (event.kill.id !== killId) return;
        const { by, aborted } = event.confirmation;
        // Each report is the data plane's total for this kill: the largest is the latest.
        if (by !== own) into.set(by, Math.max(into.get(by) ?? 0, aborted));
      },
      () => {},
    );
  }

  /** Waits for another receiver's AGENT_CHANGED of this agent; its stored answer, or null. */
  async #awaitOtherReceiver(kill: KillRecord): Promise<KillAnswer | null> {
    const subscription = this.#options.events.subscribe(
      (event) =>
        event.type === EVENT_TYPES.AGENT_CHANGED &&
        event.agent.id === kill.agentId &&
        event.agent.change === 'killed',
    );
    // Re-read after subscribing: it may have completed in between.
    const now = await findKillBySeq(this.#options.db, kill.seq);
    if (now?.answer) {
      await subscription.return?.();
      return now.answer;
    }
    await firstWithin(subscription, this.#waitMs + 1000);
    return (await findKillBySeq(this.#options.db, kill.seq))?.answer ?? null;
  }

  /** What the receiver knows when the control plane did not answer in time: itself. */
  #receiverOnly(): KillPropagation {
    return {
      dataPlanes: 1,
      confirmed: 1,
      slowestMs: 0,
      confirmedBy: [this.#options.processName],
      abortedExecutions: 0,
      abortedBy: {},
      controlPlaneReached: false,
    };
  }
}

/**
 * The fan-out's propagation with the database-path confirmations (and the receiver's own
 * application) merged in: a data plane the control plane did not hear from in time (or at all)
 * but which applied the kill from the table is confirmed all the same. Every report is a data
 * plane's total for this kill, so what each aborted is merged by data plane (the largest report)
 * and then summed: a data plane that applied the kill on two paths is counted once.
 */
function withConfirmations(
  propagation: KillPropagation,
  confirmations: ReadonlyMap<string, number>,
): KillPropagation {
  const abortedBy: Record<string, number> = { ...(propagation.abortedBy ?? {}) };
  const confirmedBy = [...propagation.confirmedBy];
  for (const [name, count] of confirmations) {
    abortedBy[name] = Math.max(abortedBy[name] ?? 0, count);
    if (!confirmedBy.includes(name)) confirmedBy.push(name);
  }
  // A propagation recorded before abortedBy existed: its total stands for the planes it named.
  const named = Object.values(abortedBy).reduce((sum, n) => sum + n, 0);
  const abortedExecutions =
    propagation.abortedBy === undefined ? propagation.abortedExecutions + named : named;
  return {
    ...propagation,
    dataPlanes: Math.max(propagation.dataPlanes, confirmedBy.length),
    confirmed: confirmedBy.length,
    confirmedBy,
    abortedExecutions,
    abortedBy,
  };
}

/** The first event of the subscription within `ms`, or undefined; the subscription is ended. */
async function firstWithin(
  subscription: AsyncIterableIterator<GatewayEvent>,
  ms: number,
): Promise<GatewayEvent | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    const result = await Promise.race([subscription.next(), timeout]);
    return result === undefined || result.done ? undefined : result.value;
  } finally {
    clearTimeout(timer);
    await subscription.return?.();
  }
}

function notFound(target: KillTarget) {
  return 'publicKey' in target
    ? gatewayError('AGENT_NOT_FOUND', { publicKey: target.publicKey })
    : unknownAgent(target.agentId);
}
