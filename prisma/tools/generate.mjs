// Runs `prisma generate` without network access. The CLI insists on locating its native schema
// engine before any command although `generate` never uses it (it runs the WASM build bundled in
// the `prisma` package), so we point the variable at an executable that always exists: node.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env });
if (result.status !== 0) {
  console.error('prisma generate failed: see the lines above (hint: run `npm install` first).');
  process.exit(result.status ?? 1);
}
