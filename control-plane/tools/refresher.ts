// Learns the tool definitions of registered MCP servers from their `tools/list`, so the
// destructive detector sees the annotations an upstream declares (a tool annotated
// destructiveHint: true is destructive whatever its name). Owned by the process that runs the
// control plane; the composition injects the lister (the data plane's upstream client) and the
// publisher, as it does for the other plane's parts.
//
// - After a server is registered or changed, `refreshAfterChange` waits for the answer a bounded
//   time (2 s by default) and returns either way: a slow upstream is learnt in the background.
// - `start` refreshes every server periodically (5 min by default); `stop` aborts what is in
//   flight and waits for it.
// - One refresh per server at a time: a request for a server being refreshed runs after it.
// - Learnt definitions are stored with the server (storage/tables/tool-definitions.ts) and published
//   before the refresh counts as done; a failure keeps the last known definitions and records
//   why on the server's record. Every outcome is reported to `onOutcome` (a metric).
// - A listed tool whose definition differs from its pin is held (docs/tool-pinning.md): each
//   tool a refresh made held is audited (tool_definition.changed) and published as an event.
import type { Logger } from 'pino';
import type { EventBus } from '../../shared/events/index.js';
import type { ListedTool } from '../../shared/tools/tool-definitions.js';
import type { Database } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import {
  storeToolDefinitions,
  storeToolRefreshFailure,
} from '../../storage/tables/tool-definitions.js';
import { reportHeldTools } from '../../storage/tables/tool-pins.js';

/** Lists an upstream's tools; `serverKey` names the upstream's connection pool. */
export type ToolLister = (
  target: { readonly serverKey: string; readonly url: string },
  signal: AbortSignal,
) => Promise<readonly ListedTool[]>;

/** What started a refresh: a registration or change, or the periodic refresh. */
export type ToolRefreshTrigger = 'change' | 'periodic';
/** `changed`: new definitions were stored; `unchanged`: the same were listed again. */
export type ToolRefreshOutcome = 'changed' | 'unchanged' | 'failed';

export const TOOL_REFRESH_DEFAULTS = { waitMs: 2_000, intervalMs: 300_000 } as const;

export interface ToolRefresherOptions {
  readonly db: Database;
  readonly listTools: ToolLister;
  /** Resolves once a snapshot with every committed change serves (SnapshotPublisher.publishNow). */
  readonly publish: () => Promise<void>;
  /** Where tool_definition.changed is audited (without it, nothing is). */
  readonly audit?: Pick<AuditWriter, 'append'>;
  /** Where tool_definition.changed events go. */
  readonly events?: Pick<EventBus, 'publish'>;
  /** How long a registration or change waits for the upstream's answer, in ms. */
  readonly waitMs?: number;
  /** Period of the refresh of every server, in ms. */
  readonly intervalMs?: number;
  readonly logger?: Pick<Logger, 'warn' | 'info'>;
  readonly onOutcome?: (trigger: ToolRefreshTrigger, outcome: ToolRefreshOutcome) => void;
}

export class ToolRefresher {
  readonly #options: ToolRefresherOptions;
  readonly #waitMs: number;
  readonly #intervalMs: number;
  /** The latest refresh of each server (`tenantId/serverId`), until it is done. */
  readonly #running = new Map<string, Promise<void>>();
  #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ToolRefresherOptions) {
    this.#options = options;
    this.#waitMs = options.waitMs ?? TOOL_REFRESH_DEFAULTS.waitMs;
    this.#intervalMs = options.intervalMs ?? TOOL_REFRESH_DEFAULTS.intervalMs;
  }

  /** Refreshes every registered server now and then every `intervalMs`. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#abort = new AbortController();
    const tick = () => {
      this.refreshAll().catch((error: unknown) =>
        this.#options.logger?.warn({ err: error }, 'periodic tool refresh failed'),
      );
    };
    this.#timer = setInterval(tick, this.#intervalMs);
    this.#timer.unref();
    tick();
  }

  /** Stops the periodic refresh, aborts refreshes in flight and waits for them. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#abort.abort();
    await this.idle();
  }

  /**
   * Refreshes one server after it was registered or changed; resolves when its definitions are
   * learnt and published, when the refresh failed (recorded on the server), or after `waitMs`,
   * whichever comes first. Never rejects.
   */
  async refreshAfterChange(tenantId: string, serverId: string): Promise<void> {
    const refresh = this.#refresh(tenantId, serverId, 'change');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#waitMs);
    });
    await Promise.race([refresh, bound]);
    clearTimeout(timer);
  }

  /** Refreshes every registered server, a few at a time; servers being refreshed are skipped. */
  async refreshAll(): Promise<void> {
    const servers = await this.#options.db.prisma.mcpServer.findMany({
      select: { tenantId: true, serverId: true },
      orderBy: [{ tenantId: 'asc' }, { serverId: 'asc' }],
    });
    const queue = servers.filter(
      (server) => !this.#running.has(keyOf(server.tenantId, server.serverId)),
    );
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        if (this.#abort.signal.aborted) return;
        await this.#refresh(next.tenantId, next.serverId, 'periodic');
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  }

  /** Resolves once no refresh is in flight. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values());
  }

  #refresh(tenantId: string, serverId: string, trigger: ToolRefreshTrigger): Promise<void> {
    const key = keyOf(tenantId, serverId);
    const previous = this.#running.get(key) ?? Promise.resolve();
    const run = previous.then(() => this.#refreshOnce(tenantId, serverId, trigger));
    this.#running.set(key, run);
    void run.finally(() => {
      if (this.#running.get(key) === run) this.#running.delete(key);
    });
    return run;
  }

  async #refreshOnce(
    tenantId: string,
    serverId: string,
    trigger: ToolRefreshTrigger,
  ): Promise<void> {
    const { db, logger } = this.#options;
    const signal = this.#abort.signal;
    try {
      if (signal.aborted) return;
      const server = await db.prisma.mcpServer.findUnique({
        where: { tenantId_serverId: { tenantId, serverId } },
        select: { url: true },
      });
      if (server === null) return;
      const where = { tenantId, serverId, url: server.url };
      let tools: readonly ListedTool[];
      try {
        tools = await this.#options.listTools(
          { serverKey: keyOf(tenantId, serverId), url: server.url },
          signal,
        );
      } catch (error) {
        if (signal.aborted) return;
        const reason = describeFailure(error);
        await storeToolRefreshFailure(db, { ...where, error: reason });
        this.#options.onOutcome?.(trigger, 'failed');
        logger?.warn(
          { tenantId, serverId, reason },
          'tools/list failed; keeping the known tool definitions',
        );
        return;
      }
      const { result: stored, held } = await storeToolDefinitions(db, {
        ...where,
        tools,
        complete: true,
      });
      if (stored === 'gone') return;
      // Audited first: a failing publish must not lose the record of the change.
      if (held.length > 0) {
        await reportHeldTools(this.#options, { tenantId, serverId }, held);
        logger?.warn(
          { tenantId, serverId, tools: held.map((tool) => tool.toolName) },
          'tool definitions changed; held until approved',
        );
      }
      if (stored === 'changed') {
        await this.#options.publish();
        logger?.info({ tenantId, serverId, tools: tools.length }, 'tool definitions learnt');
      }
      this.#options.onOutcome?.(trigger, stored);
    } catch (error) {
      // The database or the publisher failed: the next refresh tries again.
      logger?.warn({ err: error, tenantId, serverId }, 'tool refresh could not be recorded');
    }
  }
}

function keyOf(tenantId: string, serverId: string): string {
  return `${tenantId}/${serverId}`;
}

/** A short reason for the operator: the error's registry code and message, nothing else. */
function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
