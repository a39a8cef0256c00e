// Once per `vitest run`, before any test process starts: builds (or finds) the migrated PGlite
// template (pglite-template.ts) and hands its path to the test processes, which inherit this
// environment.
import { tmpdir } from 'node:os';
import { ensurePGliteTemplate, PGLITE_TEMPLATE_VARIABLE } from './pglite-template.js';

export default async function setup(): Promise<void> {
  process.env[PGLITE_TEMPLATE_VARIABLE] = await ensurePGliteTemplate(tmpdir());
}
