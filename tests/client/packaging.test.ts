// The package as a consumer gets it: `@agent-gateway/client` and each subpath export resolve from
// the repository root to the built `dist/` files (the workspace's node_modules link), import on
// this Node without printing anything, and the core pulls in no dependency at all (fetch only).
// Builds `client/dist` first when it is missing or older than the source.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const clientDir = join(root, 'client');
const manifest = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; import: string }>;
};
const SUBPATHS = Object.keys(manifest.exports).filter((path) => path !== './package.json');
/** The core's modules: platform APIs only, no imports beyond their own directory. */
const CORE = [
  'index',
  'config',
  'errors',
  'http',
  'core',
  'identity',
  'proof',
  'base58btc',
  'approvals',
  'reason-codes',
];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

beforeAll(() => {
  const built = join(clientDir, 'dist', 'index.js');
  if (!existsSync(built) || statSync(built).mtimeMs < newestSource(join(clientDir, 'src'))) {
    execFileSync('npm', ['run', 'build', '--workspace', '@agent-gateway/client'], {
      cwd: root,
      stdio: 'pipe',
    });
  }
}, 120_000);

describe('@agent-gateway/client as built', () => {
  it('exports the core, every adapter, delegation and the resource server', () => {
    expect(SUBPATHS.sort()).toEqual(
      [
        '.',
        './ai-sdk',
        './delegation',
        './langchain',
        './mcp',
        './openai-agents',
        './resource-server',
      ].sort(),
    );
    for (const path of SUBPATHS) {
      const target = manifest.exports[path] as { types: string; import: string };
      expect(existsSync(join(clientDir, target.import)), target.import).toBe(true);
      expect(existsSync(join(clientDir, target.types)), target.types).toBe(true);
    }
  });

  it.each(SUBPATHS)('import("@agent-gateway/client%s") prints nothing', (path) => {
    const specifier = `@agent-gateway/client${path === '.' ? '' : path.slice(1)}`;
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(specifier)}); if (Object.keys(m).length === 0) process.exit(3);`,
      ],
      { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
  });

  it('the core names every documented export', async () => {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        'const m = await import("@agent-gateway/client"); process.stdout.write(JSON.stringify(Object.keys(m).sort()));',
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(JSON.parse(run.stdout)).toEqual(
      expect.arrayContaining([
        'AgentRevoked',
        'ApprovalExpired',
        'ApprovalRejected',
        'ApprovalTimeout',
        'GatewayClient',
        'GatewayConfigError',
        'GatewayDenied',
        'GatewayError',
        'GatewayRequestError',
        'GatewayUnavailable',
        'createGatewayClient',
      ]),
    );
  });

  it('the core imports nothing but itself (no framework, no Node built-in)', () => {
    for (const name of CORE) {
      const code = readFileSync(join(clientDir, 'dist', `${name}.js`), 'utf8');
      const specifiers = [...code.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
        (match) => match[1],
      );
      expect(
        specifiers.filter((specifier) => !specifier?.startsWith('./')),
        name,
      ).toEqual([]);
    }
  });
});
