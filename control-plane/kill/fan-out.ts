// The control plane's half of the kill switch (DESIGN.md §6a, §7; the contract's step 3): every
// committed kill (AGENT_KILL_COMMITTED on the event bus, from whichever process received it) is
// turned into a small delta — the agent, and the tenant's status lists re-signed once with its
// credentials' bits set — and delivered to this process's own store and to every sink (the
// configuration stream's connected data planes), waiting a bounded time for their confirmations.
// What it saw is written to AgentKill.propagation (only the fan-out writes that column) and
// published as AGENT_KILL_PROPAGATED, which the receiver is waiting for to answer.
//
// Kills are handled one at a time, in the order they arrive, so deltas leave in commit order. At
// start, every kill whose propagation is null (committed while no control plane ran) is handled
// too; nobody waits for those. A kill whose propagation is already recorded is skipped, so a
// repeated event, or two control planes, never fan one kill out twice to the same record.
import type { Logger } from 'pino';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import {
  EVENT_TYPES,
  type EventBus,
  type GatewayEvent,
  type KillPropagation,
} from '../../shared/events/index.js';
import { asAgentId, asTenantId } from '../../shared/ids.js';
import type { PublicUrl } from '../../shared/public-url.js';
import type { StatusListConfig } from '../../shared/snapshot/index.js';
import type { Database } from '../../storage/engine/database.js';
import {
  findKillBySeq,
  type KillRecord,
  listUnpropagatedKills,
  recordKillPropagation,
} from '../../storage/tables/agent-kills.js';
import { killDeltaOf } from '../../storage/tables/kill-deltas.js';
import type { KeyCustody } from '../services/agentiam/custody.js';
import { caSigner, findActiveCaKey, lockTenant } from '../services/agentiam/signing-keys.js';
import { setRevocationBits } from '../services/agentiam/status-lists.js';

/** Default bounded wait for the data planes' acknowledgements of one delta. */
export const DEFAULT_KILL_ACK_WAIT_MS = 250;
/** Longest the re-signing transaction may take. */
const RESIGN_TIMEOUT_MS = 10_000;

export interface KillConfirmation {
  /** The data plane's name (`local` for this process's own store). */
  readonly name: string;
  /** From the start of the delivery to its acknowledgement. */
  readonly ms: number;
  /** In-flight executions it aborted. */
  readonly aborted: number;
}

/** A destination of kill deltas: the data planes it reaches and those that confirmed in time. */
export interface KillSink {
  deliver(
    delta: AgentKillDelta,
    waitMs: number,
  ): Promise<{ dataPlanes: number; confirmations: KillConfirmation[] }>;
}

export interface KillFanOutOptions {
  readonly db: Database;
  readonly events: EventBus;
  readonly custody: KeyCustody;
  readonly publicUrl: PublicUrl;
  readonly logger: Logger;
  /** Applies the delta to this process's store (the kill applier); returns what it aborted. */
  readonly applyLocally: (delta: AgentKillDelta) => { aborted: number };
  /**
   * The name this process's store confirms under, when it serves the data plane (role `all`):
   * it then counts as one data plane. Absent in a control plane alone.
   */
  readonly localName?: string;
  /** Bounded wait for the sinks' confirmations (default 250 ms). */
  readonly ackWaitMs?: number;
}

export class KillFanOut {
  readonly #options: KillFanOutOptions;
  readonly #sinks = new Set<KillSink>();
  readonly #ackWaitMs: number;
  /** Seqs queued or done in this process: a kill is fanned out once here. */
  readonly #seen = new Set<number>();
  #queue: Promise<void> = Promise.resolve();
  #subscription: AsyncIterableIterator<GatewayEvent> | undefined;
  #reading: Promise<void> | undefined;
  #stopped = false;

  constructor(options: KillFanOutOptions) {
    this.#options = options;
    this.#ackWaitMs = options.ackWaitMs ?? DEFAULT_KILL_ACK_WAIT_MS;
  }

  addSink(sink: KillSink): () => void {
    this.#sinks.add(sink);
    return () => {
      this.#sinks.delete(sink);
    };
  }

  /** Subscribes to committed kills, then handles those committed while none was running. */
  async start(): Promise<void> {
    this.listen();
    for (const kill of await listUnpropagatedKills(this.#options.db)) this.#enqueue(kill.seq);
  }

  /**
   * Subscribes to committed kills without reading the database (idempotent): the composition
   * calls it when it builds the process, before anything serves, and `start` once migrated.
   */
  listen(): void {
    if (this.#subscription) return;
    this.#stopped = false;
    const subscription = this.#options.events.subscribe(
      (event) => event.type === EVENT_TYPES.AGENT_KILL_COMMITTED,
    );
    this.#subscription = subscription;
    this.#reading = (async () => {
      for await (const event of subscription) {
        if (event.type === EVENT_TYPES.AGENT_KILL_COMMITTED) this.#enqueue(event.kill.seq);
      }
    })().catch((error: unknown) => {
      this.#options.logger.error({ err: error }, 'kill fan-out stopped reading events');
    });
  }

  /** Stops reading events and waits for the kill being handled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    await subscription?.return?.();
    await this.#reading;
    await this.#queue;
  }

  /** Resolves once every kill queued so far is handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.#queue;
  }

  #enqueue(seq: number): void {
    if (this.#seen.has(seq)) return;
    this.#seen.add(seq);
    this.#queue = this.#queue.then(() =>
      this.#stopped
        ? undefined
        : this.#fanOut(seq).catch((error: unknown) => {
            // Left with a null propagation: the next start of a fan-out handles it.
            this.#seen.delete(seq);
            this.#options.logger.error({ err: error, seq }, 'kill fan-out failed');
          }),
    );
  }

  async #fanOut(seq: number): Promise<void> {
    const { db, logger, events } = this.#options;
    const kill = await findKillBySeq(db, seq);
    if (!kill || kill.propagation !== null) return;
    const started = performance.now();
    const statusLists = await this.#revokeStatusBits(kill);
    const delta = killDeltaOf(kill, statusLists);
    const propagation = await this.#deliver(delta, started);
    if (!(await recordKillPropagation(db, kill.seq, propagation))) return;
    logger.info(
      { killId: kill.id, agentId: kill.agentId, seq: kill.seq, ...propagation },
      'kill propagated',
    );
    events.publish({
      type: EVENT_TYPES.AGENT_KILL_PROPAGATED,
      tenantId: asTenantId(kill.tenantId),
      kill: { id: kill.id, seq: kill.seq, agentId: asAgentId(kill.agentId) },
      propagation,
    });
  }

  /**
   * Sets the bits of the agent's revoked credentials under the tenant lock, re-signing each
   * touched list once. Empty when the tenant cannot sign (no CA key, no master key here): the
   * data planes still refuse the killed agent, and its credentials' agent reads killed.
   */
  async #revokeStatusBits(kill: KillRecord): Promise<StatusListConfig[]> {
    const { db, custody, publicUrl, logger } = this.#options;
    try {
      return await db.prisma.$transaction(
        async (tx) => {
          if (!(await lockTenant(tx, kill.tenantId))) return [];
          const entries = await tx.identityCredential.findMany({
            where: { tenantId: kill.tenantId, agentId: kill.agentId, revokedAt: { not: null } },
            select: { statusListId: true, statusListIndex: true },
          });
          if (entries.length === 0) return [];
          const key = await findActiveCaKey(tx, kill.tenantId);
          if (!key) return [];
          const signer = caSigner(custody, key);
          return setRevocationBits(tx, signer, publicUrl, entries, new Date());
        },
        { maxWait: RESIGN_TIMEOUT_MS, timeout: RESIGN_TIMEOUT_MS },
      );
    } catch (error) {
      logger.error(
        { err: error, killId: kill.id, tenantId: kill.tenantId },
        'kill: status lists could not be re-signed; the delta carries the agent only',
      );
      return [];
    }
  }

  async #deliver(delta: AgentKillDelta, started: number): Promise<KillPropagation> {
    const { applyLocally, localName, logger } = this.#options;
    let dataPlanes = 0;
    const confirmations: KillConfirmation[] = [];
    if (localName !== undefined) {
      dataPlanes++;
      const { aborted } = applyLocally(delta);
      confirmations.push({ name: localName, ms: performance.now() - started, aborted });
    } else {
      // A control plane alone still applies it: GraphQL authenticates against its store.
      applyLocally(delta);
    }
    const deliveries = await Promise.allSettled(
      [...this.#sinks].map((sink) => sink.deliver(delta, this.#ackWaitMs)),
    );
    for (const delivery of deliveries) {
      if (delivery.status === 'rejected') {
        logger.warn({ err: delivery.reason, seq: delta.seq }, 'kill delta delivery failed');
        continue;
      }
      dataPlanes += delivery.value.dataPlanes;
      confirmations.push(...delivery.value.confirmations);
    }
    const slowest = confirmations.reduce((max, c) => Math.max(max, c.ms), 0);
    return {
      dataPlanes,
      confirmed: confirmations.length,
      slowestMs: confirmations.length === 0 ? null : Math.round(slowest * 100) / 100,
      confirmedBy: confirmations.map((c) => c.name),
      abortedExecutions: confirmations.reduce((sum, c) => sum + c.aborted, 0),
      abortedBy: Object.fromEntries(confirmations.map((c) => [c.name, c.aborted])),
      controlPlaneReached: true,
    };
  }
}
