// Runs the benchmark suites (`npm run bench [-- name…]`). Each suite is a module
// tests/bench/<name>.bench.ts whose default export receives a BenchContext; suites run one after
// another in this process so their numbers share a machine state. Results are printed as
// tables and, with --json <file>, written for docs/PERFORMANCE.md.
import { readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchRow {
  readonly [column: string]: string | number;
}

export interface BenchContext {
  /** Prints a titled table and keeps it for the JSON report. */
  report(title: string, rows: readonly BenchRow[]): void;
  /** Writes a progress line to stderr (suites can take minutes). */
  progress(message: string): void;
}

export type BenchSuite = (ctx: BenchContext) => Promise<void>;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const jsonIndex = args.indexOf('--json');
  const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined;
  const wanted = args.filter(
    (arg, i) => !arg.startsWith('--') && (jsonIndex < 0 || i !== jsonIndex + 1),
  );
  const here = dirname(fileURLToPath(import.meta.url));
  const suites = (await readdir(here))
    .filter((file) => file.endsWith('.bench.ts'))
    .map((file) => file.slice(0, -'.bench.ts'.length))
    .filter((name) => wanted.length === 0 || wanted.includes(name))
    .sort();
  if (suites.length === 0) {
    console.error(`no benchmark suite matches ${wanted.join(', ')}`);
    process.exitCode = 1;
    return;
  }
  const machine = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  console.log(`# Agent Gateway benchmarks — ${machine.date}`);
  console.log(
    `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}\n`,
  );
  const tables: { suite: string; title: string; rows: readonly BenchRow[] }[] = [];
  for (const suite of suites) {
    const module = (await import(pathToFileURL(join(here, `${suite}.bench.ts`)).href)) as {
      default: BenchSuite;
    };
    console.log(`## ${suite}\n`);
    await module.default({
      report(title, rows) {
        tables.push({ suite, title, rows });
        console.log(`### ${title}\n`);
        console.log(formatTable(rows));
      },
      progress(message) {
        process.stderr.write(`[${suite}] ${message}\n`);
      },
    });
  }
  if (jsonFile) await writeFile(jsonFile, `${JSON.stringify({ machine, tables }, null, 2)}\n`);
}

function formatTable(rows: readonly BenchRow[]): string {
  const first = rows[0];
  if (!first) return '(no rows)\n';
  const columns = Object.keys(first);
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(columns),
    line(columns.map(() => '---')),
    ...rows.map((row) => line(columns.map((c) => String(row[c] ?? '')))),
    '',
  ].join('\n');
}

await main();
