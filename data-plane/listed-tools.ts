// Learns tool definitions from the `tools/list` answers that pass through the gateway: when an
// agent's allowed tools/list call is forwarded and the upstream answers with tools, their
// definitions are recorded on the server (storage/tables/tool-definitions.ts), added to those known (an
// answer may be one page of several). Recording never delays the answer: `record` only takes
// note; the writes run afterwards, one at a time, and a list identical to the one last recorded
// for the server is skipped, so a client listing in a loop costs no database write. When the stored definitions changed,
// `onChanged` runs (the composition republishes the snapshot in a process that has both planes;
// otherwise the control plane's fingerprint poll notices the bumped configVersion).
// Pinning (docs/tool-pinning.md): a listed tool whose definition differs from its pin is noted in
// the store's pin overlay at once (`onObserved`, before the write), so a call right after the
// listing is denied before the republished snapshot arrives; each tool the write made held is
// audited (tool_definition.changed) and published as an event, once per change.
import type { Logger } from 'pino';
import type { EventBus } from '../shared/events/index.js';
import { contentHash } from '../shared/json/canonical-json.js';
import { type ListedTool, listedToolsOf } from '../shared/tools/tool-definitions.js';
import type { Database } from '../storage/engine/database.js';
import type { AuditWriter } from '../storage/tables/audit-writer.js';
import {
  type StoreToolDefinitionsResult,
  storeToolDefinitions,
} from '../storage/tables/tool-definitions.js';
import { reportHeldTools } from '../storage/tables/tool-pins.js';

export interface ListedToolsRecorderOptions {
  readonly onChanged?: () => Promise<void>;
  /** Where tool_definition.changed is audited (without it, nothing is). */
  readonly audit?: Pick<AuditWriter, 'append'>;
  /** Where tool_definition.changed events go. */
  readonly events?: Pick<EventBus, 'publish'>;
  /**
   * Called synchronously in `record` with the tools of each list taken note of, before they are
   * written: the data plane's pin overlay (data-plane/store/pin-overlay.ts) learns the observed
   * digests from it.
   */
  readonly onObserved?: (source: ListedToolsSource, tools: readonly ListedTool[]) => void;
  /** Every recording's outcome (a metric). */
  readonly onOutcome?: (outcome: Exclude<StoreToolDefinitionsResult, 'gone'> | 'failed') => void;
  readonly logger?: Pick<Logger, 'warn'>;
  /** Servers whose last recorded list is remembered (least recently recorded forgotten first). */
  readonly maxServers?: number;
}

export interface ListedToolsSource {
  readonly tenantId: string;
  readonly serverId: string;
  /** The URL the answer came from. */
  readonly url: string;
}

export class ListedToolsRecorder {
  readonly #db: Database;
  readonly #options: ListedToolsRecorderOptions;
  readonly #maxServers: number;
  /** Server key -> digest of the list last recorded for it. */
  readonly #recorded = new Map<string, string>();
  #pending: Promise<void> = Promise.resolve();

  constructor(db: Database, options: ListedToolsRecorderOptions = {}) {
    this.#db = db;
    this.#options = options;
    this.#maxServers = options.maxServers ?? 10_000;
  }

  /** Takes note of a tools/list `result` from `source`; returns at once. */
  record(source: ListedToolsSource, result: unknown): void {
    const tools = listedToolsOf(result);
    if (tools === undefined || tools.length === 0) return;
    const key = `${source.tenantId}/${source.serverId}\u0000${source.url}`;
    const digest = contentHash(tools);
    if (this.#recorded.get(key) === digest) return;
    this.#remember(key, digest);
    this.#options.onObserved?.(source, tools);
    this.#pending = this.#pending.then(async () => {
      try {
        const { result: outcome, held } = await storeToolDefinitions(this.#db, {
          ...source,
          tools,
          complete: false,
        });
        if (outcome === 'gone') return;
        this.#options.onOutcome?.(outcome);
        if (held.length > 0) await reportHeldTools(this.#options, source, held);
        if (outcome === 'changed') await this.#options.onChanged?.();
      } catch (error) {
        // Recorded again when the same list passes next time.
        this.#recorded.delete(key);
        this.#options.onOutcome?.('failed');
        this.#options.logger?.warn({ err: error, ...source }, 'recording listed tools failed');
      }
    });
  }

  /** Resolves once every list noted so far is recorded. */
  idle(): Promise<void> {
    return this.#pending;
  }

  #remember(key: string, digest: string): void {
    this.#recorded.delete(key);
    this.#recorded.set(key, digest);
    if (this.#recorded.size > this.#maxServers) {
      const oldest = this.#recorded.keys().next().value;
      if (oldest !== undefined) this.#recorded.delete(oldest);
    }
  }
}
