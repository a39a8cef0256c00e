// The configuration stream as a destination of kill deltas (a KillSink of the fan-out): the delta
// is written to every connected data plane at once, then the sink waits — at most `waitMs` — for
// each of them to acknowledge it on the ack endpoint, and answers as soon as all have. A data
// plane that does not confirm in time is counted (it was connected) but not confirmed; it still
// applies the delta when it reads it, or the kills after its cursor when it reconnects.
import type { AgentKillDelta } from '../../shared/config-stream/protocol.js';
import type { KillConfirmation, KillSink } from '../kill/fan-out.js';
import type { ConfigStreamHub } from './hub.js';

export class HubKillSink implements KillSink {
  readonly #hub: ConfigStreamHub;

  constructor(hub: ConfigStreamHub) {
    this.#hub = hub;
  }

  deliver(
    delta: AgentKillDelta,
    waitMs: number,
  ): Promise<{ dataPlanes: number; confirmations: KillConfirmation[] }> {
    const started = performance.now();
    const confirmations: KillConfirmation[] = [];
    // Listen before sending: an acknowledgement cannot overtake the write, but nothing is lost
    // either way.
    const early = new Map<string, number>();
    let waiting: Map<string, string> | undefined;
    let finish: (() => void) | undefined;
    const stopListening = this.#hub.onKillAcknowledged((dataPlaneId, seq, aborted) => {
      if (seq !== delta.seq) return;
      if (!waiting) {
        early.set(dataPlaneId, aborted);
        return;
      }
      const name = waiting.get(dataPlaneId);
      if (name === undefined) return;
      waiting.delete(dataPlaneId);
      confirmations.push({ name, ms: performance.now() - started, aborted });
      if (waiting.size === 0) finish?.();
    });
    const recipients = this.#hub.sendKill(delta);
    waiting = new Map(recipients.map((plane) => [plane.id, plane.name]));
    for (const [id, aborted] of early) {
      const name = waiting.get(id);
      if (name === undefined) continue;
      waiting.delete(id);
      confirmations.push({ name, ms: performance.now() - started, aborted });
    }
    const answer = () => ({ dataPlanes: recipients.length, confirmations: [...confirmations] });
    if (waiting.size === 0) {
      stopListening();
      return Promise.resolve(answer());
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish?.(), Math.max(0, waitMs));
      finish = () => {
        finish = undefined;
        clearTimeout(timer);
        stopListening();
        resolve(answer());
      };
    });
  }
}
