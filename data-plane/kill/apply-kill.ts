// Applies a kill delta to one data plane (the receiver at once, every data plane when the
// control plane's delta arrives): the store's kill overlay marks the agent and takes the newer
// status lists, the agent's in-flight forwards are aborted (and later ones start aborted), its
// upstream MCP sessions are forgotten and its MCP proxy sessions closed, so nothing it opened is
// reused. Idempotent: applying the
// same agent again aborts whatever started since (nothing, in practice) and reports applied false.
import type { Logger } from 'pino';
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import { asAgentId } from '../../shared/ids.js';
import type { ExecutionRegistry } from '../executions.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { UpstreamClient } from '../upstream/index.js';

export interface KillApplier {
  /** `aborted`: what this kill aborted in this process so far, over every application of it. */
  apply(delta: AgentKillDelta): { applied: boolean; aborted: number };
}

/** Kills whose aborted count is remembered (the most recently applied). */
const REMEMBERED_KILLS = 1024;

export function createKillApplier(deps: {
  store: SnapshotStore;
  executions: ExecutionRegistry;
  upstream: UpstreamClient;
  /** The MCP proxy's sessions: a killed agent's are closed at once. */
  proxySessions?: { closeAgent(tenantId: string, agentId: string): number } | undefined;
  logger: Logger;
}): KillApplier {
  // What each kill aborted here, over every path that applied it (the receiver, the stream delta,
  // the kill table): each path reports the total, and the receiver merges by data plane. Bounded:
  // a kill is applied again only within seconds of its first application.
  const abortedByKill = new Map<string, number>();
  return {
    apply(delta) {
      const applied = deps.store.applyKill(delta);
      const abortedNow = deps.executions.killAgent(
        asAgentId(delta.agentId),
        `agent ${delta.agentId} was killed`,
      );
      const aborted = (abortedByKill.get(delta.killId) ?? 0) + abortedNow;
      abortedByKill.delete(delta.killId);
      abortedByKill.set(delta.killId, aborted);
      if (abortedByKill.size > REMEMBERED_KILLS) {
        abortedByKill.delete(abortedByKill.keys().next().value as string);
      }
      // The forward's session key is `<tenant>/<agent>/<server>` (governance/forward.ts).
      const prefix = `${delta.tenantId}/${delta.agentId}/`;
      deps.upstream.dropSessions((key) => key.startsWith(prefix));
      deps.proxySessions?.closeAgent(delta.tenantId, delta.agentId);
      if (applied || abortedNow > 0) {
        deps.logger.info(
          { killId: delta.killId, agentId: delta.agentId, seq: delta.seq, aborted, applied },
          'kill applied',
        );
      }
      return { applied, aborted };
    },
  };
}
