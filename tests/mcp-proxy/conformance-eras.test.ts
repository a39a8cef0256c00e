// Both protocol eras of MCP, measured with the official conformance suite's requirement sets
// (@modelcontextprotocol/conformance 0.2.0-alpha.12 on Node 22: tests/support/conformance-2026.ts):
// 2026-07-28 (stateless) and 2025-11-25 (initialize and sessions), each run at its own wire. The
// direct runs against the conformance project's dual-era reference server pin what that server
// itself fails, in the committed expected-failures baselines
// (tests/mcp-proxy/conformance-baseline-<revision>.yaml), so that a run through the gateway's
// /mcp/{serverId} can be held to the same baselines (expectWithinBaseline: nothing more fails,
// nothing less): every scenario that passes directly passes through the gateway, in both eras,
// for an agent permitted every tool. The direct runs made the baselines and run again only with
// AGENT_GATEWAY_CONFORMANCE_DIRECT=1 (after a new suite or server version: a stale baseline fails
// them); CI runs the gateway pass, and the authorization-server metadata scenario against the
// gateway's issuer. Bridging: a 2026-07-28 client through the gateway in front of the same server
// shown as a session-era server only, and a 2025-11-25 client in front of it shown as a
// stateless-only server (tests/support/era-views.ts), each pass every scored scenario the two
// requirement sets share. Without Node 22 (AGENT_GATEWAY_NODE_LINES) or the fixture the file is skipped
// with a visible message; under CI=true that is an error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConformanceGateway } from '../support/conformance.js';
import {
  BASELINES,
  conformance2026Missing,
  type EverythingServer,
  judgeAgainstBaseline,
  REVISIONS,
  type RequirementsRun,
  type Revision,
  readBaseline,
  runAuthorizationScenario,
  runRequirements,
  startEverythingServer,
} from '../support/conformance-2026.js';
import {
  type EraView,
  startSessionOnlyView,
  startStatelessOnlyView,
} from '../support/era-views.js';
import type { TestGateway } from '../support/gateway.js';

const SERVER_ID = 'everything';
const DIRECT = process.env.AGENT_GATEWAY_CONFORMANCE_DIRECT === '1';

/** The scored server scenarios of each frozen requirement set (0.2.0-alpha.12). */
const SCORED_SCENARIOS: Record<Revision, number> = { '2026-07-28': 37, '2025-11-25': 30 };
const OUTPUT_TAIL_LINES = 40;
/** The scored server scenarios both requirement sets list (0.2.0-alpha.12): what a client of
 *  either era may expect of a server of the other through the gateway's bridge. */
const SHARED_SCENARIOS = [
  'completion-complete',
  'dns-rebinding-protection',
  'prompts-get-embedded-resource',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-with-image',
  'prompts-list',
  'resources-list',
  'resources-read-binary',
  'resources-read-text',
  'resources-templates-read',
  'server-sse-multiple-streams',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-error',
  'tools-call-image',
  'tools-call-mixed-content',
  'tools-call-simple-text',
  'tools-call-with-progress',
  'tools-list',
];

const missing = conformance2026Missing();
if (missing !== undefined) {
  console.warn(`The MCP conformance requirement-set runs are SKIPPED: ${missing}.`);
}

/**
 * Asserts a run judged against `revision`'s baseline passed: nothing unexcused, no stale or
 * ignored entry, every scored scenario reported, and the CLI's own verdict (exit code) agreeing.
 */
async function expectWithinBaseline(run: RequirementsRun, revision: Revision): Promise<void> {
  const verdict = judgeAgainstBaseline(run, await readBaseline(BASELINES[revision]));
  const tail = run.output.trimEnd().split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
  const details = [...run.scenarios]
    .filter(([, result]) => result.scored && result.detail !== '')
    .map(([name, result]) => `${name}: ${result.detail}`)
    .join('\n');
  expect(verdict, `${revision}, the scored scenarios' failures and warnings:\n${details}`).toEqual({
    unexcused: [],
    stale: [],
    ignored: [],
  });
  const scored = [...run.scenarios.values()].filter((result) => result.scored);
  expect(scored).toHaveLength(SCORED_SCENARIOS[revision]);
  expect(run.exitCode, `${revision}: the CLI's last ${OUTPUT_TAIL_LINES} lines:\n${tail}`).toBe(0);
  const passed = scored.filter((result) => result.passed).length;
  console.info(
    `${revision}: ${passed} of ${scored.length} scored scenarios passed (the rest as baselined); ` +
      `${run.scenarios.size - scored.length} unscored run; ${run.seconds.toFixed(1)} s`,
  );
}

describe.skipIf(missing !== undefined || !DIRECT)(
  'the 2026-07-28 and 2025-11-25 requirements against the reference server directly',
  () => {
    let server: EverythingServer;
    beforeAll(async () => {
      server = await startEverythingServer();
    });
    afterAll(async () => {
      await server?.close();
    });

    // The two eras share the one dual-era server; each run is a CLI process of its own.
    for (const revision of REVISIONS) {
      it.concurrent(`meets ${revision} but for its baseline`, async () => {
        const run = await runRequirements(server.url, revision, {
          expectedFailures: BASELINES[revision],
        });
        await expectWithinBaseline(run, revision);
      });
    }
  },
);

describe.skipIf(missing !== undefined)(
  'the 2026-07-28 and 2025-11-25 requirements through /mcp/{serverId}',
  () => {
    let server: EverythingServer;
    let gateway: TestGateway;
    let headers: Record<string, string>;
    let sessionOnly: EraView;
    let statelessOnly: EraView;
    beforeAll(async () => {
      server = await startEverythingServer();
      ({ gateway, headers } = await startConformanceGateway(server.url, SERVER_ID));
      sessionOnly = await startSessionOnlyView(server.url);
      statelessOnly = await startStatelessOnlyView(server.url);
      const tenantId = gateway.tenant.id;
      await gateway.registerServer({ tenantId, serverId: 'session-only', url: sessionOnly.url });
      await gateway.registerServer({
        tenantId,
        serverId: 'stateless-only',
        url: statelessOnly.url,
      });
      await gateway.setPolicy(tenantId, {
        trustedServers: [SERVER_ID, 'session-only', 'stateless-only'],
      });
    });
    afterAll(async () => {
      await gateway?.close();
      await sessionOnly?.close();
      await statelessOnly?.close();
      await server?.close();
    });

    const BRIDGED = [
      ['2026-07-28', 'session-only', () => sessionOnly],
      ['2025-11-25', 'stateless-only', () => statelessOnly],
    ] as const;
    for (const [revision, serverId, view] of BRIDGED) {
      it.concurrent(`bridges a ${revision} client to a ${serverId} server: the shared scenarios pass`, async () => {
        const run = await runRequirements(`${gateway.url}/mcp/${serverId}`, revision, { headers });
        const failed = SHARED_SCENARIOS.filter((name) => run.scenarios.get(name)?.passed !== true);
        const details = failed
          .map((name) => `${name}: ${run.scenarios.get(name)?.detail ?? 'no result'}`)
          .join('\n');
        expect(failed, `the shared scenarios that failed, bridged:\n${details}`).toEqual([]);
        // It was bridged: the view refused what the other era sends.
        expect(view().refused).toBeGreaterThan(0);
        const passed = [...run.scenarios.values()].filter((r) => r.scored && r.passed).length;
        console.info(
          `${revision} client, ${serverId} server: ${SHARED_SCENARIOS.length} shared scenarios passed; ${passed} scored in all; ${run.seconds.toFixed(1)} s`,
        );
      });
    }

    for (const revision of REVISIONS) {
      it.concurrent(`passes through the gateway what passes directly: ${revision}`, async () => {
        const run = await runRequirements(`${gateway.url}/mcp/${SERVER_ID}`, revision, {
          expectedFailures: BASELINES[revision],
          headers,
        });
        await expectWithinBaseline(run, revision);
      });
    }

    it('serves authorization server metadata the suite accepts', async () => {
      const { checks, output } = await runAuthorizationScenario(
        gateway.url,
        'authorization-server-metadata-endpoint',
      );
      const failed = checks.filter((check) => check.status === 'FAILURE');
      expect(checks.length, output).toBeGreaterThan(0);
      expect(failed, output).toEqual([]);
    });
  },
);
