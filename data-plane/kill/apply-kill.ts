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
  apply(delta: AgentKillDelta): { applied: boolean; aborted: number };
}

export function createKillApplier(deps: {
  store: SnapshotStore;
  executions: ExecutionRegistry;
  upstream: UpstreamClient;
  /** The MCP proxy's sessions: a killed agent's are closed at once. */
  proxySessions?: { closeAgent(tenantId: string, agentId: string): number } | undefined;
  logger: Logger;
}): KillApplier {
  return {
    apply(delta) {
      const applied = deps.store.applyKill(delta);
      const aborted = deps.executions.killAgent(
        asAgentId(delta.agentId),
        `agent ${delta.agentId} was killed`,
      );
      // The forward's session key is `<tenant>/<agent>/<server>` (governance/forward.ts).
      const prefix = `${delta.tenantId}/${delta.agentId}/`;
      deps.upstream.dropSessions((key) => key.startsWith(prefix));
      deps.proxySessions?.closeAgent(delta.tenantId, delta.agentId);
      if (applied || aborted > 0) {
        deps.logger.info(
          { killId: delta.killId, agentId: delta.agentId, seq: delta.seq, aborted, applied },
          'kill applied',
        );
      }
      return { applied, aborted };
    },
  };
}
