// `npm ci` on a fresh clone (issue 24): CI systems and Dockerfiles install with `npm ci`, which
// refuses a lock file out of step with package.json (e.g. missing an optional platform package of
// a dependency, as Biome's once were). The manifests and the lock are copied to an empty folder
// and `npm ci --dry-run` must accept them: it reads only the lock, downloads and runs nothing.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli-process.js';

let folder: string | undefined;
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

it('npm ci accepts package-lock.json as committed (no npm install needed first)', async () => {
  folder = await mkdtemp(join(tmpdir(), 'agw-npm-ci-'));
  const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    workspaces: string[];
  };
  for (const file of ['package.json', 'package-lock.json']) {
    await copyFile(join(REPO_ROOT, file), join(folder, file));
  }
  for (const workspace of manifest.workspaces) {
    await mkdir(join(folder, workspace), { recursive: true });
    await copyFile(
      join(REPO_ROOT, workspace, 'package.json'),
      join(folder, workspace, 'package.json'),
    );
  }
  const run = await promisify(execFile)('npm', ['ci', '--dry-run', '--ignore-scripts'], {
    cwd: folder,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code?: number; stderr?: string }) => ({ code: error.code, output: error.stderr }),
  );
  expect(run.code, run.output).toBe(0);
}, 120_000);
