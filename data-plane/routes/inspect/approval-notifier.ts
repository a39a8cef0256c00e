// Wakes approval long-polls when a decision is made in this process; a decision made elsewhere
// (another gateway, the control plane in another process) is seen by the poll's periodic re-read,
// so a waiter never sleeps longer than POLL_MS without looking.
const POLL_MS = 500;

export class ApprovalNotifier {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Resolves when `id` is notified, after POLL_MS, or after `timeoutMs`, whichever is first. */
  wait(id: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(id) ?? new Set<() => void>();
      this.#waiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.#waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(timeoutMs, POLL_MS)));
      waiters.add(done);
    });
  }

  notify(id: string): void {
    for (const wake of [...(this.#waiters.get(id) ?? [])]) wake();
  }
}
