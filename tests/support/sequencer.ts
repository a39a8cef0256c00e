// The order the suite's files run in (vitest.config.ts `sequence.sequencer`): vitest's own order
// is by project name (console, integration, unit), then by the last run's durations from a cache
// a fresh clone does not have, then by file size. So CI ran the console first and started the
// longest file (node-lines, over two minutes) in the last quarter of the run, with one worker
// idle at the end. Here every file starts by how long it is expected to take, longest first
// (longest-processing-time scheduling), from the durations below, measured in a full run; a file
// not listed is expected to be short and keeps vitest's order by size after the listed ones.
//
// The projects stay in blocks: a worker serves the next file without a restart (keeping its
// module cache, see vitest.config.ts) only when that file is of the same project. Integration
// holds the longest files and runs first, then the console, then the unit project (seconds).
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const PROJECT_ORDER = ['integration', 'console', 'unit'];

/**
 * Seconds per file in a full run (`npx vitest run --reporter=json`: a file's endTime - startTime),
 * every file of 5 s or more. Only the order matters: refresh it when a file's rank changes much.
 */
export const FILE_SECONDS = new Map<string, number>([
  ['tests/runtime/node-lines.test.ts', 134],
  ['tests/cli/start.test.ts', 97],
  ['tests/console/approvals.test.ts', 93],
  ['tests/control-plane/fail-closed-walk.test.ts', 67],
  ['tests/cli/admin-key.test.ts', 65],
  ['tests/cli/start-under-npm.test.ts', 63],
  ['tests/console/audit.test.ts', 57],
  ['tests/console/policies.test.ts', 51],
  ['tests/console/keys.test.ts', 45],
  ['tests/console/agents.test.ts', 39],
  ['tests/storage/engine/embedded-database.test.ts', 35],
  ['tests/storage/engine/migrations.test.ts', 35],
  ['tests/control-plane/config-push.test.ts', 34],
  ['tests/console/quickstart.test.ts', 31],
  ['tests/control-plane/agentiam/master-key.test.ts', 31],
  ['tests/storage/tables/audit-writer-processes.test.ts', 26],
  ['tests/cli/audit-export.test.ts', 24],
  ['tests/cli/npl.test.ts', 22],
  ['tests/cli/data-dir-permissions.test.ts', 22],
  ['tests/mcp-proxy/conformance.test.ts', 19],
  ['tests/cli/smoke.test.ts', 17],
  ['tests/control-plane/graphql/api.test.ts', 17],
  ['tests/mcp-proxy/inspector-cli.test.ts', 17],
  ['tests/control-plane/config-push-revoke.test.ts', 16],
  ['tests/cli/token-key.test.ts', 15],
  ['tests/data-plane/inspect/table.test.ts', 14],
  ['tests/data-plane/oauth/process-keys.test.ts', 14],
  ['tests/control-plane/agentiam/issue.test.ts', 14],
  ['tests/control-plane/config-push-events.test.ts', 14],
  ['tests/console/sign-in.test.ts', 13],
  ['tests/cli/audit-verify.test.ts', 12],
  ['tests/console/servers.test.ts', 12],
  ['tests/cli/agentiam.test.ts', 11],
  ['tests/data-plane/oauth/introspect-revoke.test.ts', 11],
  ['tests/control-plane/graphql/introspection.test.ts', 11],
  ['tests/console/graphiql.test.ts', 10],
  ['tests/data-plane/oauth/token.test.ts', 10],
  ['tests/data-plane/upstream/egress.test.ts', 10],
  ['tests/control-plane/graphql/subscription-keys.test.ts', 9],
  ['tests/data-plane/kill/kill.test.ts', 9],
  ['tests/client/core-example.test.ts', 9],
  ['tests/control-plane/snapshot/fingerprint.test.ts', 9],
  ['tests/data-plane/oauth/delegated-authorization.test.ts', 9],
  ['tests/shared/audit/large-export.test.ts', 9],
  ['tests/control-plane/spawn/refusals.test.ts', 9],
  ['tests/data-plane/key-usage.test.ts', 9],
  ['tests/data-plane/kill/kill-overlay.test.ts', 8],
  ['tests/control-plane/spawn/fuzz.test.ts', 7],
  ['tests/control-plane/kill-propagation-hub.test.ts', 7],
  ['tests/control-plane/graphql/agent-field-scopes.test.ts', 7],
  ['tests/mcp-proxy/sdk-client.test.ts', 6],
  ['tests/data-plane/oauth/authorization-code.test.ts', 6],
  ['tests/console/overview.test.ts', 6],
  ['tests/control-plane/graphql/api-key-lockout.test.ts', 5],
  ['tests/mcp-proxy/rug-pull.test.ts', 5],
]);

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(spec.project.name);
      return index === -1 ? PROJECT_ORDER.length : index;
    };
    const path = (spec: TestSpecification) => relative(root, spec.moduleId);
    const seconds = (spec: TestSpecification) => FILE_SECONDS.get(path(spec)) ?? 0;
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
