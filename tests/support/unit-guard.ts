// The unit project's guard (vitest.config.ts, UNIT_TESTS): a unit test is pure code that runs in
// milliseconds, so one that listens on a socket, connects out, starts a process or opens a
// database is in the wrong project. Sockets and processes fail at once here, naming what was
// tried; an in-process PGlite needs neither, so a unit test file importing a database (PGlite, or
// the suite's database and gateway helpers) fails before its first test.
import childProcess from 'node:child_process';
import { readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { beforeAll, expect } from 'vitest';

const wrongProject = (what: string) =>
  new Error(
    `${what} in a unit test: unit tests are pure (no socket, no process, no database); ` +
      'move the file to the integration project (vitest.config.ts, UNIT_TESTS)',
  );
const refuse = (what: string) => () => {
  throw wrongProject(what);
};

net.Server.prototype.listen = refuse('listening on a socket') as never;
net.Socket.prototype.connect = refuse('connecting a socket') as never;
for (const name of ['spawn', 'fork', 'exec', 'execFile', 'spawnSync', 'execSync', 'execFileSync']) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`child_process.${name}`);
}
syncBuiltinESMExports();

const DATABASE_IMPORTS =
  /from '(@electric-sql\/pglite[^']*|[^']*\/support\/(databases|gateway)\.js)'/;

beforeAll(() => {
  const path = expect.getState().testPath;
  if (!path) return;
  const found = DATABASE_IMPORTS.exec(readFileSync(path, 'utf8'));
  if (found) throw wrongProject(`importing ${found[1]}`);
});
