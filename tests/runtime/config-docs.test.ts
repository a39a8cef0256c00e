// The README's configuration table and `--help` are derived from the settings table
// (runtime/config-docs.ts): the committed README must hold exactly the generated table
// (`npm run docs:config` or UPDATE_DOCS=1 rewrites it), and the help names every setting.
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../runtime/config.js';
import {
  CONFIG_TABLE_END,
  CONFIG_TABLE_START,
  renderConfigHelp,
  renderConfigTable,
  withConfigTable,
} from '../../runtime/config-docs.js';

const README = new URL('../../README.md', import.meta.url);
const ROWS = Object.values(SETTINGS);

describe('the configuration documentation', () => {
  it('is in README.md exactly as generated', async () => {
    const generated = withConfigTable(await readFile(README, 'utf8'));
    if (process.env.UPDATE_DOCS === '1') await writeFile(README, generated);
    const committed = await readFile(README, 'utf8');
    expect(committed, 'the README configuration table is stale: run npm run docs:config').toBe(
      generated,
    );
  });

  it('lists every setting once in the table, with its default and help', () => {
    const table = renderConfigTable();
    for (const row of ROWS) {
      const lines = table.split('\n').filter((line) => line.startsWith(`| \`${row.name}\` |`));
      expect(lines, row.name).toHaveLength(1);
      expect(lines[0]).toContain(row.help);
    }
    expect(table.startsWith(CONFIG_TABLE_START)).toBe(true);
    expect(table.endsWith(CONFIG_TABLE_END)).toBe(true);
  });

  it('prints every setting in --help as plain text with its default', () => {
    const help = renderConfigHelp();
    const lines = help.split('\n').filter((line) => line.startsWith('  '));
    expect(lines).toHaveLength(ROWS.length);
    for (const [index, row] of ROWS.entries()) {
      expect(lines[index]?.trim().startsWith(`${row.name} `)).toBe(true);
    }
    expect(help).not.toMatch(/[`[\]]/);
    expect(help).toMatch(
      /AGENT_GATEWAY_PORT +Port to listen on \(0 picks a free one\)\. Default: 8080$/m,
    );
    expect(help).toContain('Default: (the listening URL)');
    expect(help).toContain('See Egress (docs/security.md#egress)');
  });

  it('refuses a README without the table markers', () => {
    expect(() => withConfigTable('# README\n')).toThrow(/markers/);
  });
});
