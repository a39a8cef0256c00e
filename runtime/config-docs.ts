// The configuration's documentation, derived from SETTINGS (runtime/config.ts) and never written
// by hand: the plain-text list the server commands print under `--help`, and the README's
// configuration table between its markers. `npm run docs:config` (`tsx runtime/config-docs.ts
// --write`) rewrites the README table; tests/runtime/config-docs.test.ts fails while the committed
// one differs (UPDATE_DOCS=1 rewrites it too, as for docs/errors.md).
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPackageRoot } from '../shared/package-root.js';
import { SETTINGS, type Setting } from './config.js';

export const CONFIG_TABLE_START =
  '<!-- configuration table: generated from runtime/config.ts by `npm run docs:config` -->';
export const CONFIG_TABLE_END = '<!-- end of the configuration table -->';

const ROWS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** What the server commands print after their `--help`: one line per setting. */
export function renderConfigHelp(): string {
  const width = Math.max(...ROWS.map((row) => row.name.length));
  const lines = ROWS.map(
    (row) => `  ${row.name.padEnd(width)} ${plainText(row.help)} Default: ${plainDefault(row)}`,
  );
  return ['', 'Configuration (environment variables):', ...lines].join('\n');
}

/** The README's markdown table, markers included. */
export function renderConfigTable(): string {
  return [
    CONFIG_TABLE_START,
    '',
    '| Variable | Default | Meaning |',
    '|---|---|---|',
    ...ROWS.map(
      (row) =>
        `| \`${row.name}\` | ${escapePipes(markdownDefault(row))} | ${escapePipes(row.help)} |`,
    ),
    '',
    CONFIG_TABLE_END,
  ].join('\n');
}

/** `readme` with the text between the markers (markers included) replaced by the table. */
export function withConfigTable(readme: string): string {
  const start = readme.indexOf(CONFIG_TABLE_START);
  const end = readme.indexOf(CONFIG_TABLE_END, start);
  if (start < 0 || end < 0) {
    throw new Error(`README.md lacks the configuration table markers (${CONFIG_TABLE_START})`);
  }
  return readme.slice(0, start) + renderConfigTable() + readme.slice(end + CONFIG_TABLE_END.length);
}

function markdownDefault(row: Setting<unknown>): string {
  return 'text' in row.default ? `\`${row.default.text}\`` : row.default.unset;
}

function plainDefault(row: Setting<unknown>): string {
  return 'text' in row.default ? row.default.text : `(${plainText(row.default.unset)})`;
}

/** Markdown as a terminal shows it: no code quotes; a link is its text, then its target if new. */
function plainText(markdown: string): string {
  return markdown
    .replaceAll(/\[([^\]]+)\]\(([^)]+)\)/g, (_link, text: string, target: string) =>
      target.startsWith(text) ? text : `${text} (${target})`,
    )
    .replaceAll('`', '');
}

function escapePipes(text: string): string {
  return text.replaceAll('|', '\\|');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const file = join(findPackageRoot(), 'README.md');
    await writeFile(file, withConfigTable(await readFile(file, 'utf8')));
    process.stderr.write(`wrote the configuration table of ${file}\n`);
  } else {
    process.stdout.write(`${renderConfigTable()}\n`);
  }
}
