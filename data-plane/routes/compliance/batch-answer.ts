// The 200 answer of the batch route, as one zod schema: validate-batch.ts builds values of its
// type, and the route hands its JSON Schema to Fastify, which compiles it into the response
// serializer and documents it in OpenAPI.
import { z } from 'zod';
import { errorBodySchema } from '../../../http-edge/errors.js';
import {
  NPL_ACTIONS,
  NPL_ERROR_CODES,
  NPL_SEVERITIES,
  type NplErrorCode,
} from '../../../shared/npl/index.js';
import type { ComplianceLimits } from './limits.js';
import { toRouteSchema } from './route-schema.js';

const integer = z.number().int();

const itemErrorSchema = z.object({
  code: z.string().describe('The NPL issue code (docs/npl.md).'),
  message: z.string(),
  path: z
    .string()
    .describe('JSON path inside the policy document (`rules[1].condition`), `$` for all of it.'),
  hint: z.string().optional(),
  ruleIndex: integer.optional(),
  line: integer.optional().describe('1-based line inside the condition text.'),
  column: integer.optional().describe('1-based column inside the condition text.'),
  excerpt: z.string().optional().describe('The condition line with a caret under the column.'),
  source: z
    .object({ line: integer, column: integer })
    .optional()
    .describe('1-based position in the policy text, when the policy was sent as text.'),
});

const itemDecisionSchema = z.object({
  tool: z.string(),
  action: z.enum(NPL_ACTIONS),
  ruleId: z.string(),
  matched: z.boolean(),
  reason: z.string(),
  alertSeverity: z.enum(NPL_SEVERITIES),
});

const nplErrorCodes = Object.keys(NPL_ERROR_CODES) as [NplErrorCode, ...NplErrorCode[]];

const itemResultSchema = z.object({
  index: integer.describe('Position of the item in the request.'),
  id: z.string().optional(),
  valid: z.boolean(),
  error: z.enum(nplErrorCodes).optional().describe('The NPL error code of an invalid item.'),
  policyName: z.string().optional(),
  policyVersion: z.string().optional(),
  policyUri: z.string().optional(),
  contentHash: z.string().optional(),
  errors: z.array(itemErrorSchema),
  warnings: z
    .array(itemErrorSchema)
    .describe(
      'Findings that do not make the item invalid, shaped like errors: `always_false`, an ' +
        'ordering against a non-numeric string, which never matches (docs/npl.md, "Warnings").',
    ),
  decisions: z.array(itemDecisionSchema),
});

const limitsSchema = z.object({
  maxBodyBytes: integer,
  maxDepth: integer,
  maxItems: integer,
  maxToolCalls: integer,
  maxPolicyBytes: integer,
  maxTotalPolicyBytes: integer,
  maxPolicyTextNesting: integer,
  maxWork: integer,
}) satisfies z.ZodType<ComplianceLimits>;

const batchResultSchema = z.object({
  valid: z.boolean().describe('True when every item is valid.'),
  items: z.array(itemResultSchema),
  work: integer.describe('Evaluation work units this batch cost.'),
  limits: limitsSchema.describe('The limits in force.'),
});

export type ItemError = z.output<typeof itemErrorSchema>;
export type ItemDecision = z.output<typeof itemDecisionSchema>;
export type ItemResult = z.output<typeof itemResultSchema>;
export type BatchResult = z.output<typeof batchResultSchema>;

export const batchResponseSchemas = {
  200: toRouteSchema(batchResultSchema, 'output'),
  400: errorBodySchema,
  413: errorBodySchema,
  415: errorBodySchema,
  429: errorBodySchema,
} as const;
