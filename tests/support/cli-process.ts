// Runs the real `agent-gateway` CLI as a child process, collecting its output line by line, for
// tests that must see what an operator sees. It runs the built CLI (`dist/cli/main.js`, the `bin`
// users run), which the suite's global setup rebuilds when a source is newer (global-setup.ts):
// through tsx every process would transpile the whole gateway again, about a second each.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built CLI, relative to REPO_ROOT (the cwd of every CLI process). */
export const CLI_ENTRY = 'dist/cli/main.js';
/** What `start`, `control-plane` and `data-plane` load (cli/load-server-commands.ts). */
export const SERVER_BUNDLE = 'dist/bundle/server-commands.js';

const running = new Set<ChildProcess>();

/** Kills every CLI process a test started and has not seen exit (call in afterEach/afterAll). */
export async function killCliProcesses(): Promise<void> {
  const children = [...running];
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(children.map((child) => once(child, 'close').catch(() => {})));
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Resolves with the first stdout JSON log line whose `msg` equals `message`. */
  waitForLog(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the first stderr line matching `pattern`. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or 128 + signal number style codes as null → -1). */
  exited: Promise<number>;
}

export interface RunCliOptions {
  /** Start the CLI under this umask (octal digits, e.g. `000`), as a shell would. */
  readonly umask?: string;
}

export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: RunCliOptions = {},
): CliProcess {
  const argv = [CLI_ENTRY, ...args];
  // Under a umask: a shell sets it, then becomes node (`$0` is node, `$@` its arguments).
  const [file, fileArgs] =
    options.umask === undefined
      ? [process.execPath, argv]
      : ['/bin/sh', ['-c', `umask ${options.umask} && exec "$0" "$@"`, process.execPath, ...argv]];
  const child = spawn(file, fileArgs, {
    cwd: REPO_ROOT,
    // The storage under test is always explicit: a test's environment never leaks into the CLI.
    env: { ...process.env, CI: '', DATABASE_URL: '', AGENT_GATEWAY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: { message: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  splitLines(child.stdout, (line) => {
    stdout.push(line);
    const parsed = parseJson(line);
    if (!parsed) return;
    for (const waiter of [...waiters]) {
      if (parsed.msg === waiter.message) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(parsed);
      }
    }
  });
  const stderrWaiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  splitLines(child.stderr, (line) => {
    stderr.push(line);
    for (const waiter of [...stderrWaiters]) {
      if (waiter.pattern.test(line)) {
        stderrWaiters.splice(stderrWaiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  // 'close', not 'exit': it fires once stdout and stderr are drained too.
  const exited = once(child, 'close').then(([code]) => {
    running.delete(child);
    return typeof code === 'number' ? code : -1;
  });
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForStderr(pattern, timeoutMs = 10_000) {
      const seen = stderr.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no stderr line matching ${pattern}:\n${stderr.join('\n')}`)),
          timeoutMs,
        );
        stderrWaiters.push({
          pattern,
          resolve(line) {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
    waitForLog(message, timeoutMs = 30_000) {
      const seen = stdout.map(parseJson).find((line) => line?.msg === message);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no "${message}" log within ${timeoutMs} ms\nstdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`,
              ),
            ),
          timeoutMs,
        );
        exited.then((code) =>
          reject(new Error(`exited ${code} before "${message}"\nstderr:\n${stderr.join('\n')}`)),
        );
        waiters.push({
          message,
          resolve(line) {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

/** Runs the CLI to completion. */
export async function runCliToEnd(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const cli = runCli(args, env);
  const code = await cli.exited;
  // Let the pipes drain their last lines.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}

function splitLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      onLine(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (buffer) onLine(buffer);
  });
}

function parseJson(line: string | undefined): Record<string, unknown> | undefined {
  if (!line?.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
