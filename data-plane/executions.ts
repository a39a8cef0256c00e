// In-flight executions, by agent: each forward, and each held call waiting for its approval (the
// approval long-poll, the MCP proxy's held tools/call), gets an AbortController, so killing an
// agent aborts everything it has running (spec §1.11) instead of letting it finish, and the kill's
// `abortedExecutions` counts both: a held call is work of the agent in flight as much as a forward. A killed agent is
// remembered for the life of the process (kills are final; an entry is a few bytes): a forward
// that passed the killed check just before the kill landed, and begins only after it, starts
// aborted instead of reaching the upstream.
import type { AgentId } from '../shared/ids.js';

export interface Execution {
  readonly signal: AbortSignal;
  end(): void;
}

export class ExecutionRegistry {
  readonly #byAgent = new Map<AgentId, Set<AbortController>>();
  /** Agents killed in this process, with the abort reason their later forwards get. */
  readonly #killed = new Map<AgentId, string>();

  begin(agentId: AgentId): Execution {
    const controller = new AbortController();
    const killed = this.#killed.get(agentId);
    if (killed !== undefined) {
      controller.abort(new Error(killed));
      return { signal: controller.signal, end: () => {} };
    }
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

  /** Aborts every in-flight execution of the agent; returns how many were aborted. */
  abortAgent(agentId: AgentId, reason: string): number {
    const running = this.#byAgent.get(agentId);
    if (!running) return 0;
    this.#byAgent.delete(agentId);
    for (const controller of running) controller.abort(new Error(reason));
    return running.size;
  }

  /**
   * The kill switch: aborts the agent's in-flight forwards and held calls and makes every later
   * one start aborted. Returns how many were running.
   */
  killAgent(agentId: AgentId, reason: string): number {
    this.#killed.set(agentId, reason);
    return this.abortAgent(agentId, reason);
  }

  /** Whether the agent was killed in this process. */
  isKilled(agentId: AgentId): boolean {
    return this.#killed.has(agentId);
  }

  inFlight(agentId: AgentId): number {
    return this.#byAgent.get(agentId)?.size ?? 0;
  }
}
