import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash, NATO_PROU_STRICT_FINANCIAL } from '../../shared/npl/index.js';
import { CLI_ENTRY, REPO_ROOT } from '../support/cli-process.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, 'npl', ...args],
      { cwd: REPO_ROOT, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let dir = '';
const file = (name: string) => join(dir, name);

const VALID = `version: "1.0.0"
policyName: payments-guard
targetAgents: ["trader"]
rules:
  - ruleId: block_big_payments
    action: BLOCK
    condition: "tool.name == 'pay' && args.amount >= 1000"
    alertSeverity: CRITICAL
  - ruleId: simulate_refunds
    action: SIMULATE
    condition: "tool.name.startsWith('refund')"
    alertSeverity: LOW
`;

const INVALID = `version: "1.0"
policyName: payments-guard
targetAgents: ["*"]
rules:
  - ruleId: r1
    action: STOP
    condition: "tool.name == 'pay' && amount > 5"
    alertSeverity: LOW
`;

const ALWAYS_FALSE = `version: "1.0.0"
policyName: amount-guard
targetAgents: ["*"]
rules:
  - ruleId: block_big
    action: BLOCK
    condition: "tool.name == 'pay' && args.amount > 'lots'"
    alertSeverity: CRITICAL
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'npl-cli-'));
  await writeFile(file('valid.yaml'), VALID);
  await writeFile(file('always-false.yaml'), ALWAYS_FALSE);
  await writeFile(file('invalid-and-warned.yaml'), ALWAYS_FALSE.replace('BLOCK', 'STOP'));
  await writeFile(file('invalid.yaml'), INVALID);
  await writeFile(file('nato.json'), JSON.stringify(NATO_PROU_STRICT_FINANCIAL, null, 2));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('agent-gateway npl', () => {
  it('check accepts valid files and exits 0', async () => {
    const run = await cli('check', file('valid.yaml'), file('nato.json'));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('valid.yaml: ok (payments-guard@1.0.0, 2 rules)');
  });

  it('check prints every problem on its own line with file:line:col, code and hint, and exits 1', async () => {
    const run = await cli('check', file('invalid.yaml'), file('valid.yaml'), file('missing.yaml'));
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /invalid\.yaml:1:10: NPL_INVALID_DOCUMENT\/invalid_value at version: .*\(hint: write major\.minor\.patch/,
      ),
      expect.stringMatching(
        /invalid\.yaml:6:13: NPL_INVALID_DOCUMENT\/invalid_value at rules\[0\]\.action: action must be one of/,
      ),
      expect.stringMatching(
        /invalid\.yaml:7:39: NPL_INVALID_DOCUMENT\/unknown_identifier at rules\[0\]\.condition \(condition 1:23\): unknown identifier 'amount' \(hint: /,
      ),
      expect.stringMatching(/missing\.yaml: NPL_FILE_UNREADABLE: no such file/),
    ]);
    expect(run.stdout).toContain('valid.yaml: ok');
  });

  it('check accepts an always-false comparison, prints its warning with its position and exits 0', async () => {
    const run = await cli('check', file('always-false.yaml'));
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual([
      `${file('always-false.yaml')}: ok (amount-guard@1.0.0, 1 rules)`,
      `${file('always-false.yaml')}:7:53: warning/always_false at rules[0].condition (condition 1:37): > compares numbers, and 'lots' is not a number: always false (hint: use == or a string method for text)`,
    ]);
  });

  it('check prints the warnings of an invalid file after its problems and exits 1', async () => {
    const run = await cli('check', file('invalid-and-warned.yaml'));
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/:6:13: NPL_INVALID_DOCUMENT\/invalid_value at rules\[0\]\.action: /),
      expect.stringMatching(/:7:53: warning\/always_false at rules\[0\]\.condition /),
    ]);
  });

  it('eval evaluates an always-false comparison to false whatever the argument', async () => {
    for (const args of ['{"amount": 1000000}', '{"amount": "lots"}', '{}']) {
      const run = await cli(
        'eval',
        '--policy-file',
        file('always-false.yaml'),
        '--tool',
        'pay',
        '--args',
        args,
        '--json',
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        action: 'ALLOW',
        ruleId: 'npl_default_allow',
      });
    }
  });

  it('eval exits 1 on BLOCK and prints the decision', async () => {
    const run = await cli(
      'eval',
      '--policy-file',
      file('valid.yaml'),
      '--tool',
      'pay',
      '--args',
      '{"amount": 1000}',
      '--agent-role',
      'trader',
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^BLOCK block_big_payments \(CRITICAL\) svc:\/\/payments-guard@1\.0\.0: /,
    );
  });

  it('eval exits 0 on other decisions and prints JSON with --json', async () => {
    const run = await cli(
      'eval',
      '--policy-file',
      file('valid.yaml'),
      '--tool',
      'refund_order',
      '--json',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      action: 'SIMULATE',
      ruleId: 'simulate_refunds',
    });
    const outOfScope = await cli(
      'eval',
      '--policy-file',
      file('valid.yaml'),
      '--tool',
      'pay',
      '--args',
      '{"amount": 5000}',
      '--agent-role',
      'auditor',
      '--json',
    );
    expect(outOfScope.code).toBe(0);
    expect(JSON.parse(outOfScope.stdout).ruleId).toBe('npl_agent_not_in_scope');
  });

  it('eval resolves --policy-uri against the bundled registry and fails closed on unknown pins', async () => {
    const run = await cli(
      'eval',
      '--policy-uri',
      'svc://nato-prou-strict-financial@1.0.0',
      '--tool',
      'wire_transfer',
      '--args',
      '{"amount": 25000}',
      '--json',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      action: 'REQUIRE_HUMAN',
      policyUri: 'svc://nato-prou-strict-financial@1.0.0',
    });
    const unknown = await cli(
      'eval',
      '--policy-uri',
      'svc://nato-prou-strict-financial@2.0.0',
      '--tool',
      'read',
      '--json',
    );
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({
      action: 'BLOCK',
      ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
    });
  });

  it('eval rejects unusable input with exit 2 and one line per error', async () => {
    const unpinned = await cli(
      'eval',
      '--policy-uri',
      'svc://nato-prou-strict-financial',
      '--tool',
      'x',
    );
    expect(unpinned.code).toBe(2);
    expect(unpinned.stderr).toMatch(
      /NPL_INVALID_URI\/invalid_uri: .*not pinned.*\(hint: pin an exact version/,
    );
    const badArgs = await cli(
      'eval',
      '--policy-file',
      file('valid.yaml'),
      '--tool',
      'x',
      '--args',
      '{oops',
    );
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toMatch(/^--args: NPL_INVALID_ARGS: not JSON/);
    const invalid = await cli('eval', '--policy-file', file('invalid.yaml'), '--tool', 'x');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr.trim().split('\n')).toHaveLength(3);
  });

  it('hash prints the SHA-256 of the canonical JSON of the document', async () => {
    const run = await cli('hash', file('nato.json'));
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(
      `${contentHash(NATO_PROU_STRICT_FINANCIAL)}  ${file('nato.json')}`,
    );
    expect((await cli('hash', file('invalid.yaml'))).code).toBe(1);
  });

  it('prints --help for every command', async () => {
    const runs = await Promise.all([
      cli('--help'),
      cli('check', '--help'),
      cli('eval', '--help'),
      cli('hash', '--help'),
    ]);
    for (const run of runs) expect(run.code).toBe(0);
    expect(runs[0]?.stdout).toMatch(/check[\s\S]*eval[\s\S]*hash/);
    expect(runs[2]?.stdout).toContain('--policy-uri <uri>');
    expect(runs[2]?.stdout).toContain('--agent-role <role>');
  });
});
