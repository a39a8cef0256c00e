// The order the suite's files run in (vitest.config.ts `sequence.sequencer`): vitest's own order
// is by project name (console, integration, unit), then by the last run's durations from a cache
// a fresh clone does not have, then by file size. So CI ran the console first and started the
// longest file (node-lines, over two minutes) in the last quarter of the run, with one worker
// idle at the end. Here every file starts by how long it is expected to take, longest first
// (longest-processing-time scheduling), from the durations below; a file not listed is expected
// to be short and keeps vitest's order by size after the listed ones.
//
// The projects stay in blocks: a worker serves the next file without a restart (keeping its
// module cache, see vitest.config.ts) only when that file is of the same project. Integration
// holds the longest files and runs first (three at a time, a group of its own), then the console
// and the unit project (two at a time).
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const PROJECT_ORDER = ['integration', 'console', 'unit'];

/**
 * Seconds per file, hooks included, as vitest's summary line of the file reports them: the
 * integration files of 30 s or more from a full run (three at a time on 2 cores shared with other
 * suites: everything took 2-4 times as long as alone), the console's from a run of their own
 * group. Only the order within a project matters: refresh it when a file's rank changes much.
 */
export const FILE_SECONDS = new Map<string, number>([
  ['tests/runtime/node-lines.test.ts', 461],
  ['tests/cli/start.test.ts', 299],
  ['tests/control-plane/fail-closed-walk.test.ts', 196],
  ['tests/cli/admin-key.test.ts', 194],
  ['tests/cli/start-under-npm.test.ts', 134],
  ['tests/control-plane/spawn/refusals.test.ts', 93],
  ['tests/cli/audit-export.test.ts', 92],
  ['tests/control-plane/agentiam/master-key.test.ts', 90],
  ['tests/storage/engine/embedded-database.test.ts', 86],
  ['tests/storage/engine/migrations.test.ts', 80],
  ['tests/control-plane/graphql/empty-selection.test.ts', 77],
  ['tests/control-plane/decision-stats-split.test.ts', 69],
  ['tests/control-plane/config-push.test.ts', 69],
  ['tests/cli/data-dir-permissions.test.ts', 68],
  ['tests/cli/npl.test.ts', 67],
  ['tests/data-plane/inspect/unstorable-text.test.ts', 64],
  ['tests/data-plane/oauth/token.test.ts', 63],
  ['tests/data-plane/kill/kill.test.ts', 61],
  ['tests/control-plane/kill/kill-agent.test.ts', 61],
  ['tests/data-plane/kill/kill-refusals.test.ts', 58],
  ['tests/data-plane/upstream/egress.test.ts', 57],
  ['tests/control-plane/kill/fan-out.test.ts', 57],
  ['tests/mcp-proxy/inspector-cli.test.ts', 56],
  ['tests/control-plane/graphql/agent-rules.test.ts', 56],
  ['tests/cli/agentiam.test.ts', 56],
  ['tests/mcp-proxy/resume.test.ts', 54],
  ['tests/mcp-proxy/conformance.test.ts', 54],
  ['tests/data-plane/oauth/introspect-revoke.test.ts', 54],
  ['tests/control-plane/agentiam/revoke.test.ts', 54],
  ['tests/client/resource-server-gateway.test.ts', 54],
  ['tests/storage/tables/audit-writer-processes.test.ts', 53],
  ['tests/mcp-proxy/identity.test.ts', 53],
  ['tests/data-plane/oauth/forwarding.test.ts', 52],
  ['tests/control-plane/graphql/subscription-keys.test.ts', 52],
  ['tests/control-plane/oauth/independent-client.test.ts', 51],
  ['tests/control-plane/graphql/decision-stats.test.ts', 50],
  ['tests/client/delegation.test.ts', 49],
  ['tests/control-plane/agentiam/rotation.test.ts', 48],
  ['tests/cli/token-key.test.ts', 46],
  ['tests/data-plane/kill/kill-audit.test.ts', 45],
  ['tests/control-plane/spawn/idempotency.test.ts', 45],
  ['tests/data-plane/oauth/independent-client.test.ts', 44],
  ['tests/client/core-example.test.ts', 44],
  ['tests/control-plane/graphql/mutation-audit.test.ts', 42],
  ['tests/control-plane/spawn/delegation-links.test.ts', 41],
  ['tests/cli/smoke.test.ts', 41],
  ['tests/control-plane/graphql/introspection.test.ts', 40],
  ['tests/control-plane/snapshot/fingerprint.test.ts', 39],
  ['tests/control-plane/graphql/api.test.ts', 38],
  ['tests/runtime/openapi.test.ts', 37],
  ['tests/data-plane/oauth/process-keys.test.ts', 37],
  ['tests/control-plane/graphql/agent-field-scopes.test.ts', 37],
  ['tests/data-plane/agentiam/delegation-verify.test.ts', 36],
  ['tests/control-plane/spawn/fuzz.test.ts', 36],
  ['tests/control-plane/audit-export-route.test.ts', 36],
  ['tests/control-plane/graphql/approval-masking.test.ts', 35],
  ['tests/data-plane/inspect/table.test.ts', 34],
  ['tests/data-plane/oauth/delegated-authorization.test.ts', 32],
  ['tests/storage/tables/audit-export.test.ts', 31],
  ['tests/mcp-proxy/relay.test.ts', 31],
  ['tests/mcp-proxy/kill.test.ts', 31],
  ['tests/control-plane/spawn/graphql.test.ts', 31],
  ['tests/control-plane/graphql/subscriptions.test.ts', 31],
  ['tests/data-plane/inspect/isolation.test.ts', 30],
  ['tests/control-plane/spawn/rotation.test.ts', 30],
  ['tests/console/policies.test.ts', 103],
  ['tests/console/audit.test.ts', 81],
  ['tests/console/keys.test.ts', 65],
  ['tests/console/approvals.test.ts', 64],
  ['tests/console/agents.test.ts', 62],
  ['tests/console/quickstart.test.ts', 60],
  ['tests/console/graphiql.test.ts', 31],
  ['tests/console/servers.test.ts', 28],
  ['tests/console/overview.test.ts', 26],
  ['tests/console/sign-in.test.ts', 24],
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
