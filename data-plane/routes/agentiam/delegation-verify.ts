// POST /api/v1/agentiam/delegation/verify (scope agents:execute; spec §4.7, DESIGN.md §6): checks
// a root identity credential and the delegation links after it against the caller's tenant, and
// answers 200 with the verdict — `valid`, the depth, the agent at the end of the chain, the tools
// it may use, and the first failing hop with its rule's registry code. A chain that breaks a rule
// is a 200 with `valid: false`; only a body that is not the request's shape is a 400
// REQUEST_INVALID listing every wrong field.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { FieldIssue, GatewayError } from '../../../shared/errors/index.js';
import { compileBodyValidator } from '../../../shared/validation/body-validator.js';
import { requestInvalid } from '../../../shared/validation/field-issues.js';
import type { IdentityVerifier } from '../../agentiam/identity-verifier.js';
import { MAX_CHAIN_LINKS } from '../../agentiam/limits.js';
import { withinJsonBounds } from '../../json-bounds.js';

export const DELEGATION_VERIFY_PATH = '/api/v1/agentiam/delegation/verify';
export const DELEGATION_VERIFY_DOCS = 'docs/agentiam.md#verifying-a-chain';

const MAX_TOOL_LENGTH = 256;
/** Credentials are small documents: deeper nesting or more containers is not one of ours. */
const MAX_DEPTH = 32;
const MAX_NODES = 20_000;

/** A value of the wrong type, said the route's way; a missing field stays "is required". */
const typeMistake = (text: string) => (issue: { code?: string; input?: unknown }) =>
  issue.code === 'invalid_type' && issue.input !== undefined ? text : undefined;

export const verifyBodySchema = z
  .object({
    root_credential: z
      .record(z.string(), z.unknown(), {
        error: typeMistake('must be a JSON object (the identity credential as issued)'),
      })
      .describe('The AgentIdentityCredential at the root of the chain, exactly as issued.'),
    delegation_chain: z
      .array(z.unknown(), {
        error: typeMistake('must be an array of delegation credentials ([] for none)'),
      })
      .max(MAX_CHAIN_LINKS)
      .describe('The AgentDelegationCredentials after the root, in order ([] for depth 0).'),
    requested_tool: z
      .string()
      .min(1)
      .max(MAX_TOOL_LENGTH)
      .describe('The tool the chain must permit at every hop.'),
  })
  .meta({ title: 'Delegation verify request' });

export type VerifyBody = z.output<typeof verifyBodySchema>;

/** The credentials are walked by JSON-LD processing: bounded before they reach it. */
function withinBounds(body: VerifyBody): VerifyBody | GatewayError {
  const { root_credential, delegation_chain } = body;
  const issues: FieldIssue[] = [];
  if (!withinJsonBounds(root_credential, MAX_DEPTH, MAX_NODES)) {
    issues.push({
      field: 'root_credential',
      message: `is nested deeper than ${MAX_DEPTH} or too large`,
    });
  }
  if (!withinJsonBounds(delegation_chain, MAX_DEPTH + 1, MAX_NODES)) {
    issues.push({
      field: 'delegation_chain',
      message: `is nested deeper than ${MAX_DEPTH} or too large`,
    });
  }
  return issues.length === 0 ? body : requestInvalid(issues);
}

/** Fastify's validator hook for the route: the schema, no coercion, then the bounds. */
export const verifyBodyValidator = compileBodyValidator(verifyBodySchema, { after: withinBounds });

export const verifyAnswerSchema = {
  type: 'object',
  properties: {
    valid: { type: 'boolean' },
    depth: { type: 'integer', description: 'Delegation links verified: 0 for the root alone.' },
    agentId: {
      type: ['string', 'null'],
      description: 'The agent at the end of the chain (null when the root is unreadable).',
    },
    permittedTools: { type: 'array', items: { type: 'string' } },
    chain: {
      type: 'array',
      items: { type: 'string' },
      description: 'Agent ids from the root holder to the last delegate, as far as verified.',
    },
    failure: {
      type: ['object', 'null'],
      properties: {
        hop: { type: 'integer', description: '0 is the root credential, i the i-th link.' },
        code: { type: 'string' },
        message: { type: 'string' },
      },
      required: ['hop', 'code', 'message'],
    },
  },
  required: ['valid', 'depth', 'agentId', 'permittedTools', 'failure'],
} as const;

export async function verifyDelegation(
  identity: IdentityVerifier,
  request: FastifyRequest,
): Promise<unknown> {
  const { snapshot, tenant } = request.auth!;
  const body = request.body as VerifyBody;
  const result = await identity.verifyChain(
    snapshot,
    tenant,
    {
      rootCredential: body.root_credential,
      chain: body.delegation_chain,
      requestedTool: body.requested_tool,
    },
    'verify',
  );
  return {
    valid: result.valid,
    depth: result.depth,
    agentId: result.agentId,
    permittedTools: result.permittedTools,
    chain: result.chain,
    failure: result.failure,
  };
}
