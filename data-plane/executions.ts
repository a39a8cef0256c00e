// In-flight forwards, by agent: each forward gets an AbortController, so revoking an agent can
// abort everything it has running (spec §1.11) instead of letting it finish.
import type { AgentId } from '../shared/ids.js';

export interface Execution {
  readonly signal: AbortSignal;
  end(): void;
}

export class ExecutionRegistry {
  readonly #byAgent = new Map<AgentId, Set<AbortController>>();

  begin(agentId: AgentId): Execution {
    const controller = new AbortController();
    let running = this.#byAgent.get(agentId);
    if (!running) {
      running = new Set();
      this.#byAgent.set(agentId, running);
    }
    running.add(controller);
    const set = running;
    return {
      signal: controller.signal,
      end: () => {
        set.delete(controller);
        if (set.size === 0 && this.#byAgent.get(agentId) === set) this.#byAgent.delete(agentId);
      },
    };
  }

  /** Aborts every in-flight forward of the agent; returns how many were aborted. */
  abortAgent(agentId: AgentId, reason: string): number {
    const running = this.#byAgent.get(agentId);
    if (!running) return 0;
    this.#byAgent.delete(agentId);
    for (const controller of running) controller.abort(new Error(reason));
    return running.size;
  }

  inFlight(agentId: AgentId): number {
    return this.#byAgent.get(agentId)?.size ?? 0;
  }
}
