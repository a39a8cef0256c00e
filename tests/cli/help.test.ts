import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.js';
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

  it('documents every configuration variable on `start --help`', async () => {
    const result = await runCliToEnd(['start', '--help']);
    expect(result.code).toBe(0);
    const text = result.stdout.join('\n');
    for (const name of ['AGENT_GATEWAY_PORT', 'AGENT_GATEWAY_DATA_DIR', 'DATABASE_URL']) {
      expect(text).toContain(name);
    }
  });
});
