// runPipeline alone (data-plane/governance/pipeline.ts), in milliseconds: every row of the inspect
// table of DESIGN.md §4 that it decides and every reasonCode it can return, each asserted as the
// exact outcome, over snapshots compiled by the real compiler (pipeline-fixtures.ts). Also the
// order of its steps (the first failing one decides), the NPL context it builds, and the §4 rows
// decided just before it by other pure functions (parse, screen, authenticate). No database, no
// socket, no upstream: tests/data-plane/inspect/table.test.ts walks the same table through the
// real server, and keeps the rows only a server has (a body that is not JSON, the forward's
// 502/504).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DecisionOutlet } from '../../../data-plane/governance/exchange.js';
import { screenCall } from '../../../data-plane/governance/govern.js';
import { type CallDelegation, NO_DELEGATION } from '../../../data-plane/governance/identity.js';
import {
  buildNplContext,
  type PipelineOutcome,
  runPipeline,
} from '../../../data-plane/governance/pipeline.js';
import type { InspectRequest } from '../../../data-plane/governance/request.js';
import { parseInspectRequest } from '../../../data-plane/governance/request.js';
import { authenticate } from '../../../data-plane/plugins/auth.js';
import type { CompiledTenant } from '../../../data-plane/store/compiled-snapshot.js';
import { SnapshotStore } from '../../../data-plane/store/snapshot-store.js';
import { type ErrorCode, isErrorCode } from '../../../shared/errors/index.js';
import type { NplDecision } from '../../../shared/npl/index.js';
import { makeSnapshot } from '../../shared/snapshot/snapshot-fixture.js';
import {
  agentOf,
  type CallOptions,
  compileTenantFixture,
  EXECUTE_KEY,
  EXTRA_RULES,
  MANAGE_KEY,
  makeAcme,
  makeCall,
  makeInspectBody,
  serverOf,
  TABLE_RULES,
  UNPUBLISHED,
} from './pipeline-fixtures.js';

const ACME = compileTenantFixture();
/** acme without any pinned policy: NPL has nothing to evaluate. */
const NO_POLICIES = compileTenantFixture(makeAcme({ gatewayPolicy: { pinnedPolicies: [] } }));
/** acme pinning a policy that was never published. */
const PINS_UNPUBLISHED = compileTenantFixture(
  makeAcme({ gatewayPolicy: { pinnedPolicies: [UNPUBLISHED] } }),
);
/** acme under approved_only tool pinning. */
const APPROVED_ONLY = compileTenantFixture(
  makeAcme({ gatewayPolicy: { toolPinning: 'approved_only' } }),
);
/** acme allowing destructive operations. */
const DESTRUCTIVE_ALLOWED = compileTenantFixture(
  makeAcme({ gatewayPolicy: { denyDestructive: false } }),
);

interface Decide {
  readonly tenant?: CompiledTenant;
  readonly delegation?: CallDelegation;
}

/** runPipeline as governKnownAgent calls it: the call's agent and (registered) server. */
function decide(options: CallOptions & Decide = {}): PipelineOutcome {
  const tenant = options.tenant ?? ACME;
  const call = makeCall(options);
  return runPipeline(
    tenant,
    agentOf(tenant, call.agentId),
    serverOf(tenant, call),
    call,
    options.delegation ?? NO_DELEGATION,
  );
}

/** The decision a rule of a published policy makes when it matches. */
function ruleDecision(
  uri: string,
  ruleId: string,
  action: NplDecision['action'],
  condition: string,
  alertSeverity: NplDecision['alertSeverity'],
): NplDecision {
  const [policyName, policyVersion] = uri.slice('svc://'.length).split('@') as [string, string];
  return {
    matched: true,
    action,
    ruleId,
    reason: `Rule ${ruleId} matched: ${condition}`,
    alertSeverity,
    policyName,
    policyVersion,
    policyUri: uri,
  };
}

function failClosed(uri: string): NplDecision {
  const [policyName, policyVersion] = uri.slice('svc://'.length).split('@') as [string, string];
  return {
    matched: true,
    action: 'BLOCK',
    ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
    reason: `Policy ${uri} could not be resolved (not published); fail-closed`,
    alertSeverity: 'CRITICAL',
    policyName,
    policyVersion,
    policyUri: uri,
  };
}

const BLOCK_FLAGGED = ruleDecision(
  TABLE_RULES,
  'block_flagged',
  'BLOCK',
  "args.flag == 'npl-block'",
  'CRITICAL',
);
const HOLD_FOR_HUMAN = ruleDecision(
  TABLE_RULES,
  'hold_for_human',
  'REQUIRE_HUMAN',
  "args.flag == 'needs-human'",
  'MEDIUM',
);

interface DenyCase {
  /** The §4 row ("when"), or why the code is not a row of its own. */
  readonly when: string;
  readonly call: CallOptions & Decide;
  readonly expected: PipelineOutcome & { readonly kind: 'deny' };
}

/**
 * Every reasonCode runPipeline returns, with a call that draws it and the exact outcome. The last
 * test of this file fails when pipeline.ts names a code this table does not have.
 */
const DENY_CASES = {
  MCP_SERVER_NOT_WHITELISTED: {
    when: '§4: server not on the tenant whitelist',
    call: { server: 'elsewhere' },
    expected: {
      kind: 'deny',
      code: 'MCP_SERVER_NOT_WHITELISTED',
      message: 'server elsewhere is not whitelisted',
    },
  },
  MCP_METHOD_BLOCKED: {
    when: '§4: method or tool blocked by gateway policy',
    call: { method: 'prompts/get', params: { name: 'greeting' } },
    expected: {
      kind: 'deny',
      code: 'MCP_METHOD_BLOCKED',
      message: 'method prompts/get is blocked',
    },
  },
  AGENT_TOOL_NOT_ALLOWED: {
    when: 'step 3 (not in §4): a tool outside the agent’s allowedTools',
    call: { agent: 'reader', tool: 'read_rows', args: { table: 't' } },
    expected: {
      kind: 'deny',
      code: 'AGENT_TOOL_NOT_ALLOWED',
      message: 'agent may not use tool read_rows',
    },
  },
  MCP_TOOL_DEFINITION_CHANGED: {
    when: 'step 3 (docs/tool-pinning.md): the tool changed since its definition was approved',
    call: { tool: 'lookup', args: { key: 'k' } },
    expected: {
      kind: 'deny',
      code: 'MCP_TOOL_DEFINITION_CHANGED',
      message: 'tool lookup of server files changed its definition since it was approved',
    },
  },
  MCP_TOOL_NOT_APPROVED: {
    when: 'step 3 (docs/tool-pinning.md): approved_only and nobody approved the tool',
    call: { tenant: APPROVED_ONLY, tool: 'fresh_tool', args: {} },
    expected: {
      kind: 'deny',
      code: 'MCP_TOOL_NOT_APPROVED',
      message: 'tool fresh_tool of server files has not been approved by an operator',
    },
  },
  MCP_DESTRUCTIVE_OP_BLOCKED: {
    when: '§4: destructive operation and the policy denies them',
    call: { tool: 'drop_table', args: { table: 'users' } },
    expected: {
      kind: 'deny',
      code: 'MCP_DESTRUCTIVE_OP_BLOCKED',
      message: 'destructive operation: matches "drop"',
      signal: { kind: 'tool-name', detail: 'matches "drop"' },
    },
  },
  MCP_DATA_EXFILTRATION_SUSPECTED: {
    when: 'between steps 4 and 5 (docs/inspection-detectors.md): a foreign destination',
    call: { args: { text: 'post it to https://evil.example.io/x' } },
    expected: {
      kind: 'deny',
      code: 'MCP_DATA_EXFILTRATION_SUSPECTED',
      message: 'possible exfiltration: https URL to evil.example.io',
      signal: {
        kind: 'destination',
        detail: 'https URL to evil.example.io',
        path: 'arguments.text',
      },
    },
  },
  NPL_POLICY_BLOCK: {
    when: '§4: NPL rule with action BLOCK matched (plus ruleId, policy)',
    call: { args: { flag: 'npl-block' } },
    expected: {
      kind: 'deny',
      code: 'NPL_POLICY_BLOCK',
      message: BLOCK_FLAGGED.reason,
      decision: BLOCK_FLAGGED,
    },
  },
  NPL_REGISTRY_FAIL_CLOSED: {
    when: '§4: pinned policy cannot be resolved (the request names an unpublished pin)',
    call: { policy: UNPUBLISHED },
    expected: {
      kind: 'deny',
      code: 'NPL_REGISTRY_FAIL_CLOSED',
      message: failClosed(UNPUBLISHED).reason,
      decision: failClosed(UNPUBLISHED),
    },
  },
} satisfies Partial<Record<ErrorCode, DenyCase>>;

const DENY_ROWS = Object.entries(DENY_CASES).map(([code, row]) => [code, row.when, row] as const);

describe('runPipeline: every reasonCode it returns, one call each', () => {
  it.each(DENY_ROWS)('%s (%s)', (_code, _when, { call, expected }) => {
    expect(decide(call)).toEqual(expected);
  });
});

describe('runPipeline: the other rows of DESIGN.md §4 it decides', () => {
  it('202 NPL_REQUIRE_HUMAN: a REQUIRE_HUMAN rule holds the call, with its decision', () => {
    expect(decide({ args: { flag: 'needs-human' } })).toEqual({
      kind: 'require_human',
      decision: HOLD_FOR_HUMAN,
    });
  });

  it('200 allow: no rule matches, the pinned policy’s default decision', () => {
    expect(decide()).toEqual({
      kind: 'allow',
      simulate: false,
      decision: {
        matched: false,
        action: 'ALLOW',
        ruleId: 'npl_default_allow',
        reason: 'No NPL rules matched',
        alertSeverity: 'LOW',
        policyName: 'table-rules',
        policyVersion: '1.0.0',
        policyUri: TABLE_RULES,
      },
    });
  });

  it('200 allow: a tenant without pinned policies allows without an NPL decision', () => {
    expect(decide({ tenant: NO_POLICIES })).toEqual({
      kind: 'allow',
      simulate: false,
      decision: null,
    });
  });

  it('200 allow, simulated: a SIMULATE rule allows the call but asks for a mock result', () => {
    expect(decide({ args: { flag: 'simulate' } })).toEqual({
      kind: 'allow',
      simulate: true,
      decision: ruleDecision(
        TABLE_RULES,
        'simulate_flagged',
        'SIMULATE',
        "args.flag == 'simulate'",
        'LOW',
      ),
    });
  });
});

describe('runPipeline: the variants of each step', () => {
  it.each([
    [
      'a method matching a * glob',
      { method: 'resources/read', params: { uri: 'file:///a' } },
      'method resources/read is blocked',
    ],
    ['an exact blocked tool', { tool: 'forbidden' }, 'tool forbidden is blocked'],
    ['a tool matching a * glob', { tool: 'danger_zone' }, 'tool danger_zone is blocked'],
  ] as const)('MCP_METHOD_BLOCKED: %s', (_name, call, message) => {
    expect(decide(call)).toEqual({ kind: 'deny', code: 'MCP_METHOD_BLOCKED', message });
  });

  it('a whitelisted server that is not registered still goes through every step', () => {
    expect(decide({ server: 'ghost', args: { flag: 'npl-block' } })).toMatchObject({
      kind: 'deny',
      code: 'NPL_POLICY_BLOCK',
    });
    // No registered server: no pins, no annotations; the call is allowed (the forward answers 404).
    expect(decide({ server: 'ghost', tool: 'lookup' })).toMatchObject({ kind: 'allow' });
  });

  it('allowedTools and tool pins apply to tools/call only', () => {
    // `reader` may not call read_rows, and `lookup` is held, but neither is a tools/call here.
    expect(decide({ agent: 'reader', method: 'tools/list', tool: 'read_rows' })).toMatchObject({
      kind: 'allow',
    });
    expect(decide({ method: 'completion/complete', tool: 'lookup' })).toMatchObject({
      kind: 'allow',
    });
    expect(decide({ agent: 'reader', tool: 'echo' })).toMatchObject({ kind: 'allow' });
  });

  it('MCP_DESTRUCTIVE_OP_BLOCKED from the upstream’s destructiveHint on a harmless-sounding tool', () => {
    expect(decide({ tool: 'tidy_up', args: {} })).toEqual({
      kind: 'deny',
      code: 'MCP_DESTRUCTIVE_OP_BLOCKED',
      message: 'destructive operation: destructiveHint: true',
      signal: { kind: 'annotation', detail: 'destructiveHint: true' },
    });
  });

  it('a destructive operation passes when the tenant does not deny them', () => {
    expect(
      decide({ tenant: DESTRUCTIVE_ALLOWED, tool: 'drop_table', args: { table: 'users' } }),
    ).toMatchObject({ kind: 'allow', simulate: false });
  });

  it('NPL_REGISTRY_FAIL_CLOSED: the tenant pins a policy that is not published', () => {
    expect(decide({ tenant: PINS_UNPUBLISHED })).toEqual({
      kind: 'deny',
      code: 'NPL_REGISTRY_FAIL_CLOSED',
      message: failClosed(UNPUBLISHED).reason,
      decision: failClosed(UNPUBLISHED),
    });
  });

  it('a pin the request names is evaluated with the tenant’s, and the most restrictive wins', () => {
    // table-rules holds `needs-human`; extra-rules, named by the request, blocks it.
    expect(decide({ policy: EXTRA_RULES, args: { flag: 'needs-human' } })).toEqual({
      kind: 'deny',
      code: 'NPL_POLICY_BLOCK',
      message: "Rule block_what_table_rules_hold matched: args.flag == 'needs-human'",
      decision: ruleDecision(
        EXTRA_RULES,
        'block_what_table_rules_hold',
        'BLOCK',
        "args.flag == 'needs-human'",
        'MEDIUM',
      ),
    });
    // Named alone by a tenant without pins, it decides alone.
    expect(decide({ tenant: NO_POLICIES, policy: EXTRA_RULES })).toMatchObject({
      kind: 'allow',
      decision: { ruleId: 'npl_default_allow', policyUri: EXTRA_RULES },
    });
  });
});

describe('runPipeline: the first failing step decides (spec §1.3 order)', () => {
  it.each([
    [
      'whitelist before blocked method',
      { server: 'elsewhere', method: 'prompts/get' },
      'MCP_SERVER_NOT_WHITELISTED',
    ],
    [
      'blocked method before blocked tool',
      { method: 'prompts/get', tool: 'forbidden' },
      'MCP_METHOD_BLOCKED',
    ],
    [
      'blocked tool before agent tools',
      { agent: 'reader', tool: 'danger_drop' },
      'MCP_METHOD_BLOCKED',
    ],
    [
      'agent tools before tool pins',
      { agent: 'reader', tool: 'drop_table', tenant: APPROVED_ONLY },
      'AGENT_TOOL_NOT_ALLOWED',
    ],
    [
      'tool pins before destructive',
      { tenant: APPROVED_ONLY, tool: 'drop_table' },
      'MCP_TOOL_NOT_APPROVED',
    ],
    [
      'destructive before exfiltration',
      { tool: 'drop_table', args: { text: 'https://evil.example.io' } },
      'MCP_DESTRUCTIVE_OP_BLOCKED',
    ],
    [
      'exfiltration before NPL',
      { args: { text: 'https://evil.example.io', flag: 'npl-block' } },
      'MCP_DATA_EXFILTRATION_SUSPECTED',
    ],
    [
      'every gateway step before an unresolvable pin',
      { tool: 'forbidden', policy: UNPUBLISHED },
      'MCP_METHOD_BLOCKED',
    ],
  ] as const)('%s', (_name, call, code) => {
    expect(decide(call)).toMatchObject({ kind: 'deny', code });
  });
});

describe('runPipeline: the NPL context (DESIGN.md §4)', () => {
  it('names the tool, its arguments, the agent, server, method, tenant, mode and delegation', () => {
    const call = makeCall({ agent: 'reader', args: { text: 'hi' }, mode: 'shadow' });
    const delegation: CallDelegation = { depth: 1, chain: ['root', 'reader'] };
    expect(
      buildNplContext(ACME, agentOf(ACME, 'reader'), serverOf(ACME, call), call, delegation),
    ).toEqual({
      tool: { name: 'echo', args: { text: 'hi' } },
      args: { text: 'hi' },
      agentRole: 'reader',
      agent: { id: 'reader', name: 'reader', role: 'reader' },
      server: { id: 'files' },
      method: 'tools/call',
      tenant: { id: 'acme', name: 'acme' },
      mode: 'shadow',
      delegation,
    });
  });

  it('names an unregistered server by its id', () => {
    const call = makeCall({ server: 'ghost' });
    expect(
      buildNplContext(ACME, agentOf(ACME, 'worker'), undefined, call, NO_DELEGATION).server,
    ).toEqual({
      id: 'ghost',
    });
  });

  it('passes the verified delegation to the rules', () => {
    const deep: CallDelegation = { depth: 2, chain: ['root', 'middle', 'worker'] };
    expect(decide({ delegation: deep })).toEqual({
      kind: 'require_human',
      decision: ruleDecision(
        TABLE_RULES,
        'hold_deep_delegation',
        'REQUIRE_HUMAN',
        "delegation.depth >= 2 && tool.name == 'echo'",
        'CRITICAL',
      ),
    });
    expect(decide({ delegation: { depth: 1, chain: ['root', 'worker'] } })).toMatchObject({
      kind: 'allow',
    });
  });
});

/** Where screenCall is given an outlet it must not use: it decides, it never answers. */
const UNUSED_OUTLET: DecisionOutlet = {
  elapsedSeconds: () => 0,
  deliver: () => {
    throw new Error('screenCall delivered an answer');
  },
};

function screen(call: InspectRequest, headers: Record<string, string> = {}) {
  return screenCall({ outlet: UNUSED_OUTLET, tenant: ACME, call, inspectionId: 'i-1' }, headers);
}

describe('the rows of DESIGN.md §4 decided just before runPipeline', () => {
  it('400 MCP_MALFORMED_RPC: parseInspectRequest refuses missing fields and non JSON-RPC 2.0', () => {
    const body = makeInspectBody();
    expect(parseInspectRequest({ ...body, agent_id: undefined })).toMatchObject({
      ok: false,
      rpcId: 1,
    });
    const rpc1 = { ...body, request: { ...(body.request as object), jsonrpc: '1.0' } };
    expect(parseInspectRequest(rpc1)).toMatchObject({ ok: false, rpcId: 1 });
    expect(parseInspectRequest(body)).toMatchObject({ ok: true });
  });

  it('400 MCP_TOKEN_PASSTHROUGH: screenCall refuses an upstream token in a header or _meta', () => {
    expect(screen(makeCall(), { 'mcp-authorization': 'Bearer upstream-1' })).toMatchObject({
      code: 'MCP_TOKEN_PASSTHROUGH',
    });
    const meta = makeCall({ args: { text: 'hi' } });
    const withMeta: InspectRequest = {
      ...meta,
      rpc: {
        ...meta.rpc,
        params: { ...meta.rpc.params, _meta: { access_token: 'tok-123456789' } },
      },
    };
    const block = screen(withMeta);
    expect(block).toMatchObject({ code: 'MCP_TOKEN_PASSTHROUGH' });
    expect(JSON.stringify(block)).not.toContain('tok-123456789');
  });

  it('403 AGENT_REVOKED: screenCall refuses a killed agent; a live one passes on', () => {
    expect(screen(makeCall({ agent: 'retired' }))).toEqual({
      code: 'AGENT_REVOKED',
      message: expect.any(String),
    });
    expect(screen(makeCall())).toBe(agentOf(ACME, 'worker'));
  });

  it('401 AUTH_INVALID_API_KEY / 403 AUTH_INSUFFICIENT_SCOPE: authenticate over the snapshot', () => {
    const store = new SnapshotStore();
    expect(store.apply(makeSnapshot(1, [makeAcme()])).applied).toBe(true);
    const codeOf = (header: string | undefined): string | undefined => {
      try {
        authenticate(header, store, 'agents:execute');
        return undefined;
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(codeOf(`Bearer ${EXECUTE_KEY}`)).toBeUndefined();
    expect(codeOf(undefined)).toBe('AUTH_INVALID_API_KEY');
    expect(codeOf(`Bearer ${EXECUTE_KEY.slice(0, -1)}x`)).toBe('AUTH_INVALID_API_KEY');
    expect(codeOf(`Bearer ${MANAGE_KEY}`)).toBe('AUTH_INSUFFICIENT_SCOPE');
  });
});

describe('coverage of this file', () => {
  it('has a case for every reasonCode pipeline.ts names, and names none it does not', () => {
    const source = readFileSync(
      new URL('../../../data-plane/governance/pipeline.ts', import.meta.url),
      'utf8',
    );
    const named = new Set<string>();
    for (const [, literal] of source.matchAll(/['"`]([A-Z][A-Z0-9_]+)['"`]/g)) {
      if (isErrorCode(literal)) named.add(literal as string);
    }
    expect([...named].sort()).toEqual(Object.keys(DENY_CASES).sort());
  });

  it('draws every kind of outcome', () => {
    // A new kind of PipelineOutcome fails the typecheck here until a call that draws it is named.
    const draws: Record<PipelineOutcome['kind'], CallOptions & Decide> = {
      deny: { server: 'elsewhere' },
      require_human: { args: { flag: 'needs-human' } },
      allow: {},
    };
    for (const [kind, call] of Object.entries(draws)) expect(decide(call).kind).toBe(kind);
  });
});
