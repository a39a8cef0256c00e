// The order the suite's files run in (vitest.config.ts `sequence.sequencer`): vitest's own order
// is by project name (console, integration, unit), then by the last run's durations from a cache
// a fresh clone does not have, then by file size. So CI ran the console first and started the
// longest file (node-lines, over two minutes) in the last quarter of the run, with one worker
// idle at the end. Here every file starts by how long it is expected to take, longest first
// (longest-processing-time scheduling), from the durations below; a file not listed is expected
// to be short and keeps vitest's order by size after the listed ones.
//
// The three projects run in one group of three workers (vitest.config.ts), in tiers: the long
// integration files, the console's, the short integration files, the unit project's. A worker
// serves the next file without a restart (keeping its module cache, see vitest.config.ts) only
// when that file is of the same project, so the projects stay in blocks, and the console's block
// comes before the short integration files: started last, its 10–40 s files were the run's tail
// (two browsers at a time for two minutes after the last integration file had ended).
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Integration files expected to take at least this long run before the console's. */
const LONG_FILE_SECONDS = 10;

/**
 * Seconds per file from a full `vitest run` on an otherwise idle 2-core machine (2026-11-28, the
 * JSON reporter's start and end of each file): the integration files of 10 s or more, the
 * console's of 5 s or more (admin-key's is the same run's minus the 15 s wait it has since lost).
 * Only the order within a project matters: refresh it when a file's rank changes much.
 */
export const FILE_SECONDS = new Map<string, number>([
  ['tests/runtime/node-lines.test.ts', 216],
  ['tests/cli/start.test.ts', 133],
  ['tests/control-plane/fail-closed-walk.test.ts', 88],
  ['tests/cli/start-under-npm.test.ts', 64],
  ['tests/control-plane/agentiam/master-key.test.ts', 43],
  ['tests/control-plane/config-push.test.ts', 42],
  ['tests/cli/admin-key.test.ts', 35],
  ['tests/cli/npl.test.ts', 29],
  ['tests/mcp-proxy/inspector-cli.test.ts', 28],
  ['tests/cli/audit-export.test.ts', 27],
  ['tests/storage/engine/migrations.test.ts', 25],
  ['tests/control-plane/spawn/fuzz.test.ts', 24],
  ['tests/cli/agentiam.test.ts', 23],
  ['tests/mcp-proxy/conformance.test.ts', 23],
  ['tests/shared/audit/large-export.test.ts', 21],
  ['tests/data-plane/oauth/process-keys.test.ts', 21],
  ['tests/storage/tables/audit-writer-processes.test.ts', 21],
  ['tests/cli/data-dir-permissions.test.ts', 20],
  ['tests/control-plane/graphql/api.test.ts', 19],
  ['tests/storage/engine/embedded-database.test.ts', 19],
  ['tests/control-plane/config-push-events.test.ts', 18],
  ['tests/data-plane/inspect/table.test.ts', 17],
  ['tests/control-plane/graphql/agent-field-scopes.test.ts', 17],
  ['tests/control-plane/limits-fleet.test.ts', 15],
  ['tests/cli/smoke.test.ts', 14],
  ['tests/cli/audit-verify.test.ts', 14],
  ['tests/client/core-example.test.ts', 13],
  ['tests/control-plane/spawn/refusals.test.ts', 11],
  ['tests/data-plane/kill/kill.test.ts', 10],
  ['tests/control-plane/config-push-revoke.test.ts', 10],
  ['tests/console/policies.test.ts', 40],
  ['tests/console/audit.test.ts', 34],
  ['tests/console/approvals.test.ts', 28],
  ['tests/console/keys.test.ts', 27],
  ['tests/console/quickstart.test.ts', 23],
  ['tests/console/agents.test.ts', 12],
  ['tests/console/servers.test.ts', 11],
  ['tests/console/sign-in.test.ts', 8],
]);

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const path = (spec: TestSpecification) => relative(root, spec.moduleId);
    const seconds = (spec: TestSpecification) => FILE_SECONDS.get(path(spec)) ?? 0;
    const rank = (spec: TestSpecification) => {
      switch (spec.project.name) {
        case 'integration':
          return seconds(spec) >= LONG_FILE_SECONDS ? 0 : 2;
        case 'console':
          return 1;
        case 'unit':
          return 3;
        default:
          return 4;
      }
    };
    const size = (spec: TestSpecification) => statSync(spec.moduleId).size;
    return [...files].sort(
      (a, b) =>
        rank(a) - rank(b) ||
        seconds(b) - seconds(a) ||
        size(b) - size(a) ||
        path(a).localeCompare(path(b)),
    );
  }
}
