// JSON schemas of the batch validation route: the request (for documentation and OpenAPI; the
// route validates it with checkBatchEnvelope, which never coerces types and checks limits
// first) and the 200 answer, which Fastify compiles into the response serializer.
import { errorBodySchema } from '../../plugins/errors.js';
import { CONTEXT_ROOTS } from './envelope.js';
import { type ComplianceLimits, MAX_ITEM_ID_LENGTH } from './limits.js';

export function batchRequestSchema(limits: ComplianceLimits) {
  const toolCall = {
    type: 'object',
    additionalProperties: false,
    required: ['tool'],
    properties: {
      tool: { type: 'string', minLength: 1 },
      args: { type: 'object', description: 'The tool arguments (context `args` and `tool.args`).' },
      agentRole: { type: 'string' },
      context: {
        type: 'object',
        additionalProperties: false,
        description: 'Other NPL context roots.',
        properties: Object.fromEntries(CONTEXT_ROOTS.map((root) => [root, {}])),
      },
    },
  };
  const item = {
    type: 'object',
    additionalProperties: false,
    oneOf: [{ required: ['policy'] }, { required: ['policyUri'] }],
    properties: {
      id: { type: 'string', maxLength: MAX_ITEM_ID_LENGTH },
      policy: {
        type: ['string', 'object'],
        description: `NPL document as YAML/JSON text or a JSON object (≤ ${limits.maxPolicyBytes} bytes).`,
      },
      policyUri: { type: 'string', description: 'A pin svc://name@x.y.z of a bundled policy.' },
      toolCalls: { type: 'array', items: toolCall },
    },
  };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: {
      items: { type: 'array', minItems: 1, maxItems: limits.maxItems, items: item },
    },
  } as const;
}

const position = {
  type: 'object',
  properties: { line: { type: 'integer' }, column: { type: 'integer' } },
  required: ['line', 'column'],
} as const;

const itemError = {
  type: 'object',
  required: ['code', 'message', 'path'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    path: { type: 'string' },
    hint: { type: 'string' },
    ruleIndex: { type: 'integer' },
    line: { type: 'integer' },
    column: { type: 'integer' },
    excerpt: { type: 'string' },
    source: position,
  },
} as const;

const decision = {
  type: 'object',
  required: ['tool', 'action', 'ruleId', 'matched', 'reason', 'alertSeverity'],
  properties: {
    tool: { type: 'string' },
    action: { type: 'string', enum: ['ALLOW', 'BLOCK', 'REQUIRE_HUMAN', 'SIMULATE'] },
    ruleId: { type: 'string' },
    matched: { type: 'boolean' },
    reason: { type: 'string' },
    alertSeverity: { type: 'string', enum: ['LOW', 'MEDIUM', 'CRITICAL'] },
  },
} as const;

const itemResult = {
  type: 'object',
  required: ['index', 'valid', 'errors', 'decisions'],
  properties: {
    index: { type: 'integer' },
    id: { type: 'string' },
    valid: { type: 'boolean' },
    error: { type: 'string' },
    policyName: { type: 'string' },
    policyVersion: { type: 'string' },
    policyUri: { type: 'string' },
    contentHash: { type: 'string' },
    errors: { type: 'array', items: itemError },
    decisions: { type: 'array', items: decision },
  },
} as const;

const limitNames: readonly (keyof ComplianceLimits)[] = [
  'maxBodyBytes',
  'maxDepth',
  'maxItems',
  'maxToolCalls',
  'maxPolicyBytes',
  'maxTotalPolicyBytes',
  'maxPolicyTextNesting',
  'maxWork',
];

export const batchResponseSchema = {
  type: 'object',
  required: ['valid', 'items', 'work', 'limits'],
  properties: {
    valid: { type: 'boolean' },
    items: { type: 'array', items: itemResult },
    work: { type: 'integer' },
    limits: {
      type: 'object',
      required: limitNames,
      properties: Object.fromEntries(limitNames.map((name) => [name, { type: 'integer' }])),
    },
  },
} as const;

export const batchErrorResponses = {
  400: errorBodySchema,
  413: errorBodySchema,
  415: errorBodySchema,
  429: errorBodySchema,
} as const;
