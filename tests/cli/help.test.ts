import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.js';
import { SETTINGS } from '../../runtime/config.js';
import { runCliToEnd } from '../support/cli-process.js';

function allCommands(command: Command, path: string[] = []): [string[], Command][] {
  return command.commands.flatMap((child) => {
    const childPath = [...path, child.name()];
    return [[childPath, child] as [string[], Command], ...allCommands(child, childPath)];
  });
}

describe('--help', () => {
  const commands = allCommands(buildProgram());

  it('is available on the program and lists every top-level command', async () => {
    const result = await runCliToEnd(['--help']);
    expect(result.code).toBe(0);
    const text = result.stdout.join('\n');
    for (const [path] of commands.filter(([p]) => p.length === 1)) {
      expect(text).toContain(path[0]);
    }
  });

  it.each(commands.map(([path, command]) => [path.join(' '), command] as const))(
    '`%s` has a description and help text',
    (_name, command) => {
      expect(command.description().length).toBeGreaterThan(10);
      expect(command.helpInformation()).toContain('Usage:');
    },
  );

  it.each(['start', 'control-plane', 'data-plane'])(
    'documents every configuration variable on `%s --help`',
    async (command) => {
      const result = await runCliToEnd([command, '--help']);
      expect(result.code).toBe(0);
      const text = result.stdout.join('\n');
      expect(text).toContain('Configuration (environment variables):');
      for (const { name } of Object.values(SETTINGS)) expect(text).toContain(name);
    },
  );
});

// A command's code is loaded when it runs (cli/commands/*-run.ts and the imports inside actions):
// --help and every other command must not pay for the gateway, the NPL engine or the W3C VC
// libraries, about 0.5 s of CPU per process before the split.
describe('what a command loads', () => {
  const recorder = fileURLToPath(new URL('../support/record-module-loads.mjs', import.meta.url));
  const HEAVY = [
    '/runtime/start-gateway.js',
    '/shared/npl/',
    '/shared/agentiam/credentials.js',
    '/shared/agentiam/proof-of-possession.js',
    '/node_modules/fastify/',
    '/node_modules/graphql/',
    '/node_modules/@digitalbazaar/',
    '/node_modules/jose/',
  ];

  async function loadedBy(args: readonly string[]): Promise<{ code: number; urls: string[] }> {
    const dir = await mkdtemp(join(tmpdir(), 'agent-gateway-modules-'));
    const log = join(dir, 'modules.log');
    await writeFile(log, '');
    try {
      const { code } = await runCliToEnd(args, {
        NODE_OPTIONS: `--import=${recorder}`,
        AGENT_GATEWAY_TEST_MODULE_LOG: log,
      });
      return { code, urls: (await readFile(log, 'utf8')).split('\n').filter(Boolean) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const heavyIn = (urls: readonly string[]) => [
    ...new Set(urls.filter((url) => HEAVY.some((part) => url.includes(part)))),
  ];

  it('--help, of the program and of its commands, loads none of the heavy modules', async () => {
    for (const args of [['--help'], ['agentiam', '--help'], ['npl', 'eval', '--help']]) {
      const { code, urls } = await loadedBy(args);
      expect(code).toBe(0);
      expect(urls.some((url) => url.endsWith('/dist/cli/program.js'))).toBe(true);
      expect(heavyIn(urls), args.join(' ')).toEqual([]);
    }
  });

  it('a command that needs the NPL engine loads it (the recorder sees it)', async () => {
    const { code, urls } = await loadedBy(['npl', 'check', 'examples/policies/no-such-file.yaml']);
    expect(code).toBe(1);
    expect(heavyIn(urls).some((url) => url.includes('/shared/npl/'))).toBe(true);
  });
});
