// `agent-gateway audit verify` as an operator runs it: a real child process, real files and
// stdin, asserting the exit code and the exact first line (entry index, id and code).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildChain, editable, rawExportText } from '../shared/audit/helpers.js';
import { CLI_ENTRY, REPO_ROOT } from '../support/cli-process.js';

const SAMPLE = fileURLToPath(
  new URL('../fixtures/audit/npl-audit-export.sample.json', import.meta.url),
);
const dir = mkdtempSync(join(tmpdir(), 'audit-verify-'));
const chain = buildChain(6);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function runVerify(args: readonly string[], stdin?: string): Promise<Run> {
  const child = spawn(process.execPath, [CLI_ENTRY, 'audit', 'verify', ...args], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  child.stdin.end(stdin ?? '');
  const [code] = (await once(child, 'close')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}

function exportFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function tampered(edit: (entries: Record<string, unknown>[]) => unknown[]): string {
  return rawExportText(edit(editable(chain)));
}

describe('audit verify', () => {
  it.concurrent('exits 0 for the NPL verifier sample, printing count and head', async () => {
    const run = await runVerify([SAMPLE]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      'OK: 2 entries verified (tenant 01DEMOPILOTTENANT000000)\n' +
        'head: 527858a678163c4658ab645181557ac456f6e11303cb11bb14c06a0a8c63a79c\n',
    );
  });

  it.concurrent('exits 0 for our export read from stdin, with --json', async () => {
    const run = await runVerify(['--json', '-'], rawExportText(chain));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      ok: true,
      count: 6,
      head: chain[5]!.hash,
      tenantId: chain[0]!.tenantId,
    });
  });

  const broken: [string, string, string][] = [
    [
      'malformed JSON',
      '[\n{"id":"evt_0",,}\n]\n',
      'FAILED at entry 0 (id unknown): AUDIT_MALFORMED_JSON',
    ],
    [
      'a truncated file',
      rawExportText(chain).slice(0, 1500),
      'FAILED at entry 2 (id unknown): AUDIT_MALFORMED_JSON',
    ],
    [
      'a missing field',
      tampered((e) => {
        delete e[2]!.createdAt;
        return e;
      }),
      'FAILED at entry 2 (id evt_2): AUDIT_MISSING_FIELD',
    ],
    [
      'a wrong-typed field',
      tampered((e) => {
        e[1]!.resourceId = 42;
        return e;
      }),
      'FAILED at entry 1 (id evt_1): AUDIT_INVALID_FIELD',
    ],
    [
      'an edited action',
      tampered((e) => {
        e[3]!.action = 'inspect.allowed';
        return e;
      }),
      'FAILED at entry 3 (id evt_3): AUDIT_HASH_MISMATCH',
    ],
    [
      'edited metadata',
      tampered((e) => {
        (e[4]!.metadata as Record<string, unknown>).reasonCode = 'NONE';
        return e;
      }),
      'FAILED at entry 4 (id evt_4): AUDIT_SEAL_MISMATCH',
    ],
    [
      'a deleted entry',
      tampered((e) => [...e.slice(0, 3), ...e.slice(4)]),
      'FAILED at entry 3 (id evt_4): AUDIT_CHAIN_BROKEN',
    ],
    [
      'a deleted first entry',
      tampered((e) => e.slice(1)),
      'FAILED at entry 0 (id evt_1): AUDIT_CHAIN_BROKEN',
    ],
  ];
  for (const [what, text, firstLine] of broken) {
    it.concurrent(`exits 1 naming the first broken entry for ${what}`, async () => {
      const run = await runVerify([exportFile(`${what.replaceAll(' ', '-')}.json`, text)]);
      expect(run.code).toBe(1);
      const lines = run.stdout.split('\n');
      expect(lines[0]).toBe(firstLine);
      expect(lines[1]).toMatch(/^why: {2}\S/);
      expect(lines[2]).toMatch(/^hint: \S/);
    });
  }

  it.concurrent('names JSON Lines as such instead of a cut-off export', async () => {
    const lines = `${chain.map((entry) => JSON.stringify(entry)).join('\n')}\n`;
    const run = await runVerify([exportFile('trail.jsonl', lines)]);
    expect(run.code).toBe(1);
    const [first, why, hint] = run.stdout.split('\n');
    expect(first).toBe('FAILED at entry 0 (id unknown): AUDIT_MALFORMED_JSON');
    expect(why).toContain('this file is JSON Lines');
    expect(why).not.toContain('cut off');
    expect(hint).toContain('Verifiable export or GET /api/v1/audit/export');
  });

  it.concurrent('tells reordered from deleted and reports --json failures', async () => {
    const reordered = tampered((e) => [e[0], e[2], e[1], ...e.slice(3)]);
    const run = await runVerify(['--json', exportFile('reordered-json.json', reordered)]);
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      ok: false,
      count: 1,
      firstBroken: { index: 1, id: 'evt_2', code: 'AUDIT_CHAIN_BROKEN', cause: 'reordered' },
    });
    expect(result.hint).toEqual(expect.any(String));
  });

  it.concurrent('accepts a slice continuing from --after, and checks --head', async () => {
    const slice = exportFile('slice.json', rawExportText(chain.slice(2)));
    expect((await runVerify(['--after', chain[1]!.hash, slice])).code).toBe(0);
    const full = exportFile('full.json', rawExportText(chain.slice(0, 4)));
    const run = await runVerify(['--head', chain[5]!.hash, full]);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe('FAILED at entry 4 (id unknown): AUDIT_HEAD_MISSING');
  });

  it.concurrent('exits 2 for a missing file and bad usage', async () => {
    const missing = await runVerify([join(dir, 'nope.json')]);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toBe(
      `audit verify: cannot read '${join(dir, 'nope.json')}': no such file\n`,
    );
    const noFile = await runVerify([]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain("missing required argument 'file'");
    const badHash = await runVerify(['--after', 'xyz', SAMPLE]);
    expect(badHash.code).toBe(2);
    expect(badHash.stderr).toContain('64 lowercase hex digits');
  });
});
