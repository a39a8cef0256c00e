// The tenant gateway policy's fields, each written once: a zod rule with its bounds (and the
// messages an operator reads when a change breaks them), its default and its `.describe()` text.
// Derived from it: the patch validation of the service and of updateGatewayPolicy, the GraphQL
// GatewayPolicy fields and GatewayPolicyInput (types, nullability and descriptions), the
// snapshot's GatewayPolicyConfig, the defaults the data plane compiles for a field an older
// snapshot lacks, and the console's list of editable fields.
// Written elsewhere by necessity: the database column (prisma/schema.prisma and its migration),
// whose @default must equal the default here (tests/shared/gateway-policy/ compares a new tenant's
// row with GATEWAY_POLICY_DEFAULTS), and the fail-closed value of a tenant without a policy row
// (control-plane/snapshot/build-snapshot.ts). Pure besides zod: the console imports it.
import { z } from 'zod';
import { usageLimitsRule } from '../limits/usage-limits.js';
import { formatIssuePath } from '../npl/errors.js';
import { parsePolicyUri } from '../npl/uri.js';
import { TOOL_PINNING_MODES } from '../tools/tool-pins.js';
import { DEFAULT_DESTRUCTIVE_TOOL_PATTERNS } from './destructive-tool-patterns.js';
import { EXECUTION_MODES, OAUTH_MODES } from './modes.js';

/** One invalid field of a patch: `field` is a path such as `allowedModes[1]`. */
export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

const NAME_LIST_LIMIT = 1000;
const NAME_MAX = 256;

/** A list of names (servers, methods, tools, domains), each 1-256 characters. */
function nameList(pattern?: RegExp) {
  const itemMessage = `must be a string of 1-${NAME_MAX} characters`;
  const item = z
    .string({ error: itemMessage })
    .min(1, { error: itemMessage, abort: true })
    .max(NAME_MAX, { error: itemMessage, abort: true });
  const listMessage = `must be a list of at most ${NAME_LIST_LIMIT} strings`;
  return z
    .array(
      pattern
        ? item.regex(pattern, { error: (issue) => `"${issue.input}" is not valid here` })
        : item,
      { error: listMessage },
    )
    .max(NAME_LIST_LIMIT, listMessage);
}

function flag() {
  return z.boolean({ error: 'must be true or false' });
}

function intRange(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, message).max(max, message);
}

function oneOf<const Values extends readonly [string, ...string[]]>(values: Values) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/** A policy URI pinned to a version; the message says what is wrong (shared/npl/uri.ts). */
const policyUri = z.string().superRefine((uri, context) => {
  try {
    parsePolicyUri(uri);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/**
 * Every field of the gateway policy, in the order snapshots and validation issues list them. A
 * list's default is a function, so no two policies share one array.
 */
export const GATEWAY_POLICY_FIELDS = {
  trustedServers: nameList()
    .default(() => [])
    .describe(
      'Server ids (the {serverId} of mcp://{serverId}) agents of the tenant may reach; a call ' +
        'to any other server is denied.',
    ),
  blockedMethods: nameList()
    .default(() => [])
    .describe('JSON-RPC methods refused for every agent: exact names or `*` globs.'),
  blockedTools: nameList()
    .default(() => [])
    .describe('Tool names refused for every agent: exact names or `*` globs.'),
  denyDestructive: flag()
    .default(true)
    .describe(
      "Whether calls to destructive tools (destructiveToolPatterns, the upstream's " +
        'destructiveHint, destructive SQL or shell) are denied.',
    ),
  destructiveToolPatterns: nameList()
    .default(() => [...DEFAULT_DESTRUCTIVE_TOOL_PATTERNS])
    .describe(
      'Tool-name words treated as destructive (`*` globs allowed); this is the whole list.',
    ),
  exfilDetectSecrets: flag()
    .default(true)
    .describe('Whether arguments carrying secrets (private keys, cloud keys, tokens) are denied.'),
  exfilBulkExportLimit: z
    .int({ error: 'must be a positive integer or null (off)' })
    .min(1, 'must be a positive integer or null (off)')
    .nullable()
    .default(1000)
    .describe(
      'A call asking for more items than this positive limit (limit, pageSize, $top…) is a ' +
        'bulk export and is denied; null switches the check off.',
    ),
  exfilCheckDestinations: flag()
    .default(true)
    .describe('Whether URLs and email addresses in arguments must be in exfilAllowedDomains.'),
  exfilAllowedDomains: nameList(/^[A-Za-z0-9.*:[\]-]+$/)
    .default(() => [])
    .describe('Domains destinations may go to; each allows itself and its subdomains.'),
  oauthMode: oneOf(OAUTH_MODES)
    .default('none')
    .describe(
      'How agents authenticate to MCP servers: none, or mcp_as (the gateway issues tokens).',
    ),
  maxDelegationDepth: intRange(0, 16)
    .default(3)
    .describe('Longest delegation chain accepted, 0-16 links.'),
  requireAgentIdentity: flag()
    .default(false)
    .describe(
      "Whether every inspect must present the agent's identity credential (and its delegation " +
        'chain, for a delegate) with an Agent-Proof header: without them the call is refused ' +
        '(401 AGENT_IDENTITY_REQUIRED). Default false, a documented deviation from spec §5.5 ' +
        "until agents' clients present credentials.",
    ),
  pinnedPolicies: z
    .array(policyUri, { error: 'must be a list of svc://name@version' })
    .default(() => [])
    .describe('NPL policies evaluated on every inspect of the tenant, as svc://name@version.'),
  allowedModes: z
    .array(oneOf(EXECUTION_MODES), { error: 'must be a list of modes' })
    .default(() => [...EXECUTION_MODES])
    .describe('Execution modes agents may request: a subset of production, simulation, shadow.'),
  approvalTtlSeconds: intRange(10, 7 * 24 * 3600)
    .default(900)
    .describe(
      'Seconds a held call waits for a human decision before it expires, 10-604800 (7 days).',
    ),
  toolPinning: oneOf(TOOL_PINNING_MODES)
    .default('first_sight')
    .describe(
      'Tool-definition pinning (docs/tool-pinning.md): first_sight (default; the first ' +
        'definition seen of a tool is pinned, a later change is held until approved) or ' +
        'approved_only (no tool is callable until an operator approves its definition).',
    ),
  approvalWaitSeconds: intRange(0, 3600)
    .default(120)
    .describe(
      'Seconds the MCP proxy keeps a tools/call that needs approval open, waiting for the ' +
        'decision, 0-3600 (default 120); past it the client gets APPROVAL_PENDING.',
    ),
  proxyExecutionMode: oneOf(EXECUTION_MODES)
    .default('production')
    .describe(
      'Execution mode of MCP proxy calls of agents without their own executionMode: ' +
        'production (default), simulation or shadow.',
    ),
  proxyModeHeader: flag()
    .default(false)
    .describe(
      'Whether an MCP proxy client may choose the execution mode with an X-Execution-Mode ' +
        'header (one of allowedModes). Default false.',
    ),
  limits: usageLimitsRule
    .default(() => [])
    .describe(
      'Usage limits and budgets (docs/limits.md): call counts and sums of one argument per ' +
        'agent, agent and tool, or tenant over fixed windows, checked after NPL. At most 64; ' +
        'a change replaces the whole list.',
    ),
} as const;

export type GatewayPolicyField = keyof typeof GATEWAY_POLICY_FIELDS;

export const GATEWAY_POLICY_FIELD_NAMES = Object.freeze(
  Object.keys(GATEWAY_POLICY_FIELDS) as GatewayPolicyField[],
);

type ReadonlyList<T> = T extends readonly (infer Item)[] ? readonly Item[] : T;

/** A whole gateway policy: every field with a value its rule accepts. */
export type GatewayPolicyValues = {
  readonly [F in GatewayPolicyField]: ReadonlyList<z.output<(typeof GATEWAY_POLICY_FIELDS)[F]>>;
};

/** Any subset of the fields; an omitted field keeps its value. */
export type GatewayPolicyPatch = Partial<GatewayPolicyValues>;

/** The policy a new tenant starts with (deeply frozen). */
export const GATEWAY_POLICY_DEFAULTS: GatewayPolicyValues = deepFreeze(
  z.object(GATEWAY_POLICY_FIELDS).parse({}),
);

/** The rules of a change: every field optional and without a default (omitted keeps its value). */
const PATCH_RULES = z.object(
  Object.fromEntries(
    GATEWAY_POLICY_FIELD_NAMES.map((field) => [
      field,
      GATEWAY_POLICY_FIELDS[field].unwrap().optional(),
    ]),
  ),
);

/**
 * A patch checked against the fields' rules: every problem (one issue per wrong field or list
 * item), or the patch as stored, with the defaults inside list items filled in (a limit's
 * omitted `servers` is `[]`).
 */
export function parseGatewayPolicyPatch(
  patch: unknown,
):
  | { readonly ok: true; readonly patch: GatewayPolicyPatch }
  | { readonly ok: false; readonly issues: FieldIssue[] } {
  const result = PATCH_RULES.safeParse(patch);
  if (result.success) {
    const parsed = Object.fromEntries(
      Object.entries(result.data).filter(([, value]) => value !== undefined),
    );
    return { ok: true, patch: parsed as GatewayPolicyPatch };
  }
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      field: formatIssuePath(
        issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
      ),
      message: issue.message,
    })),
  };
}

/** Every problem of a patch, one issue per wrong field or list item; an empty list when valid. */
export function gatewayPolicyPatchIssues(patch: unknown): FieldIssue[] {
  const parsed = parseGatewayPolicyPatch(patch);
  return parsed.ok ? [] : parsed.issues;
}

/**
 * The policy with each field that `policy` lacks at its default: a snapshot persisted before a
 * field existed compiles to what a new tenant gets. Null stays null (it is a value).
 */
export function withGatewayPolicyDefaults(policy: GatewayPolicyPatch): GatewayPolicyValues {
  const values: Record<string, unknown> = {};
  for (const field of GATEWAY_POLICY_FIELD_NAMES) {
    values[field] = policy[field] === undefined ? GATEWAY_POLICY_DEFAULTS[field] : policy[field];
  }
  return values as GatewayPolicyValues;
}

function deepFreeze<T extends object>(value: T): T {
  for (const member of Object.values(value)) {
    if (member !== null && typeof member === 'object') Object.freeze(member);
  }
  return Object.freeze(value);
}
