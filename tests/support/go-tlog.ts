// Go's golang.org/x/mod/sumdb (note, tlog) as an independent verifier of the gateway's audit
// checkpoints and proofs: tests/interop/go/tlogcheck.go, built once per run with Debian's
// golang-go and golang-golang-x-mod-dev (GOPATH mode: the machines have no module proxy).
// Under CI=true a missing toolchain is an error, as for Chromium: CI must not silently stop
// checking. `.ci/run` installs both packages.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SOURCE = new URL('../interop/go/tlogcheck.go', import.meta.url);
const GOPATH = '/usr/share/gocode';
const X_MOD = join(GOPATH, 'src/golang.org/x/mod/sumdb/tlog');

/** Why Go's verifier cannot run here, or undefined when it can (throws under CI). */
export function goTlogMissing(): string | undefined {
  let reason: string | undefined;
  if (!existsSync('/usr/bin/go')) reason = 'golang-go is not installed (/usr/bin/go)';
  else if (!existsSync(X_MOD)) reason = `golang-golang-x-mod-dev is not installed (${X_MOD})`;
  if (reason !== undefined && process.env.CI === 'true') {
    throw new Error(`CI=true but Go's sumdb verifier cannot run: ${reason}`);
  }
  return reason;
}

let built: Promise<string> | undefined;

/** The built checker's path (built once per process, cached by source hash across runs). */
export function goTlogBinary(): Promise<string> {
  built ??= (async () => {
    const source = await readFile(SOURCE);
    const digest = createHash('sha256').update(source).digest('hex').slice(0, 16);
    const dir = join(tmpdir(), 'agent-gateway-go-tlog');
    const binary = join(dir, `tlogcheck-${digest}`);
    if (existsSync(binary)) return binary;
    await mkdir(dir, { recursive: true });
    const output = `${binary}.${process.pid}`;
    await promisify(execFile)('go', ['build', '-o', output, SOURCE.pathname], {
      cwd: dir,
      env: { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: join(dir, 'cache'), GOFLAGS: '' },
    });
    // Renamed into place: two workers building at once both end with a whole binary.
    await import('node:fs/promises').then((fs) => fs.rename(output, binary));
    return binary;
  })();
  return built;
}

/** Runs the checker with one JSON request; resolves with its JSON answer. */
export async function goTlog<T>(request: Record<string, unknown>): Promise<T> {
  const binary = await goTlogBinary();
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.end(JSON.stringify(request));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`tlogcheck failed (${code}): ${Buffer.concat(err).toString()}`);
  return JSON.parse(Buffer.concat(out).toString()) as T;
}
