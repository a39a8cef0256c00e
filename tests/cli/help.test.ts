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
