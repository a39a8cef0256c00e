import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot, saveSnapshot } from '../../../data-plane/remote/persistence.js';
import type { ConfigSnapshot } from '../../../shared/snapshot/index.js';

const snapshot = (version: number): ConfigSnapshot => ({
  version,
  builtAt: new Date(0).toISOString(),
  tenants: [],
  tokenSigningKeys: [],
});

function warnings() {
  const lines: string[] = [];
  return { lines, logger: { warn: (_details: unknown, message: string) => lines.push(message) } };
}

describe('persisted snapshot', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agw-persist-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips with its epoch, replaces the old file and leaves no temporary file', async () => {
    const file = join(dir, 'last-snapshot.json');
    await saveSnapshot(file, { epoch: 'ab12', snapshot: snapshot(3) });
    await saveSnapshot(file, { epoch: 'cd34', snapshot: snapshot(4) });
    const { lines, logger } = warnings();
    expect(await loadSnapshot(file, logger as never)).toEqual({
      epoch: 'cd34',
      snapshot: snapshot(4),
    });
    expect(lines).toEqual([]);
    expect(await readdir(dir)).toEqual(['last-snapshot.json']);
    expect(JSON.parse(await readFile(file, 'utf8')).version).toBe(4);
  });

  it('is absent without a warning when there is no file', async () => {
    const { lines, logger } = warnings();
    expect(await loadSnapshot(join(dir, 'missing.json'), logger as never)).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it.each([
    ['truncated JSON', '{"format":1,"version":4,"epo'],
    ['another shape', '{"format":1,"version":4,"epoch":"a","snapshot":{"version":5,"tenants":[]}}'],
    ['no snapshot', '{"format":1,"version":4,"epoch":"a"}'],
    ['null', 'null'],
  ])('ignores a corrupt file (%s) with a warning', async (_name, text) => {
    const file = join(dir, 'corrupt.json');
    await writeFile(file, text);
    const { lines, logger } = warnings();
    expect(await loadSnapshot(file, logger as never)).toBeUndefined();
    expect(lines).toEqual(['persisted snapshot corrupt; ignored']);
  });
});
