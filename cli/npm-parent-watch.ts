// A server started by npm (`npm start`, `npx agent-gateway start`: npm sets `npm_lifecycle_event`)
// stops when npm goes away, so a supervisor that stops npm never leaves it serving, orphaned,
// holding the data directory.
//
// Why this is needed: npm runs a script through `sh -c`; on SIGTERM it forwards the signal to that
// shell only. dash (Debian's sh) does not exec the script's last command, so the shell dies and
// the gateway, its child, never hears of it; npm then exits 143. The `start` script says `exec`, so
// under any POSIX shell the gateway is npm's own child and gets the forwarded signal itself (and
// npm waits for it and exits with its status). This watch covers what forwarding cannot: a script
// or a shell that does not exec, an `npx` run, npm killed outright (SIGKILL, the OOM killer).
//
// Why the parent pid, polled: it is the one sign of "the process that started me is gone" that
// every platform has (the orphan is re-parented to init or a subreaper, so `process.ppid`
// changes). There is no portable event for it: Linux's PR_SET_PDEATHSIG is out of Node's reach,
// and npm gives its script no pipe whose closing could tell (stdin is inherited, often /dev/null).
// A getppid every POLL_MS costs nothing measurable. Only under npm: a gateway started from a shell
// and left running (`nohup`, `&`) must outlive that shell.

/** How often the parent pid is read: a stop is noticed within this. */
export const POLL_MS = 250;

export interface ParentWatchOptions {
  readonly env: NodeJS.ProcessEnv;
  /** The current parent pid (`process.ppid`). */
  readonly parentPid: () => number;
  readonly pollMs?: number;
}

/**
 * Calls `onGone` once with the parent's former pid when the process that started this one under
 * npm is gone. Returns the function that stops watching; does nothing outside npm.
 */
export function watchNpmParent(
  options: ParentWatchOptions,
  onGone: (formerParentPid: number) => void,
): () => void {
  if (!options.env.npm_lifecycle_event) return () => {};
  const parent = options.parentPid();
  const timer = setInterval(() => {
    if (options.parentPid() === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, options.pollMs ?? POLL_MS);
  // The watch never keeps the process alive by itself.
  timer.unref();
  return () => clearInterval(timer);
}
