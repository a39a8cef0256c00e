// Errors are built from the registry only: outside the builder, no source constructs a
// GatewayError (or a family such as StorageError) with a message of its own.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;
const SOURCE_FOLDERS = [
  'shared',
  'storage',
  'http-edge',
  'data-plane',
  'control-plane',
  'runtime',
  'cli',
];
// The builder itself.
const BUILDERS = new Set(['shared/errors/gateway-error.ts']);
const DIRECT_CONSTRUCTION = /new\s+(GatewayError|StorageError)\s*[(<]/;

async function listSources(folder: string): Promise<string[]> {
  const names = await readdir(join(ROOT, folder), { recursive: true });
  return names
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => `${folder}/${name}`);
}

describe('error construction', () => {
  it('goes through gatewayError in every source folder', async () => {
    const offenders: string[] = [];
    for (const folder of SOURCE_FOLDERS) {
      for (const file of await listSources(folder)) {
        if (BUILDERS.has(file)) continue;
        const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
        lines.forEach((line, index) => {
          if (DIRECT_CONSTRUCTION.test(line))
            offenders.push(`${file}:${index + 1}: ${line.trim()}`);
        });
      }
    }
    expect(offenders, 'use gatewayError(code, params) instead').toEqual([]);
  });
});
