// The installed package's root folder (where prisma/ and schema/ live), found from this module's
// location so it works from the TypeScript sources and from the compiled dist/ tree alike; and
// its version.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function findPackageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'prisma', 'schema.prisma'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the agent-gateway package root');
    dir = parent;
  }
  cached = dir;
  return dir;
}

let version: string | undefined;

/** The installed package's version (its package.json), read once; '0.0.0' when unreadable. */
export function packageVersion(): string {
  version ??= readVersion();
  return version;
}

function readVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(findPackageRoot(), 'package.json'), 'utf8'));
    return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
