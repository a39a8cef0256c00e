// The inspect request body (spec §2.1), once, as a zod schema: request.ts validates with it inside
// the pipeline (a bad body is the audited 400 MCP_MALFORMED_RPC, never Fastify's own 400), and
// inspectBodyJsonSchema documents the same contract in OpenAPI. Problems are worded the one way
// of every REST route (shared/validation/field-issues.ts); a field words only what that cannot
// say (the policy URI's form), and never a missing field, which is "is required". What a schema does not
// say — the tool named twice must be the same tool, the nesting bound of `params` — request.ts
// checks after the schema.
import { z } from 'zod';
import { POLICY_URI_FORM, POLICY_URI_PATTERN } from '../../shared/npl/index.js';
import { EXECUTION_MODES } from '../../shared/snapshot/index.js';
import { MAX_CHAIN_LINKS } from '../agentiam/limits.js';

/** Longest identifier (agent, server, tool, execution, approval, JSON-RPC id). */
export const MAX_ID_LENGTH = 256;

function identifier(description: string) {
  return z.string().min(1).max(MAX_ID_LENGTH).describe(description);
}

/** A schema's own wording of a value of the wrong type; a missing one stays "is required". */
function wrongValue(text: string) {
  return (issue: { code?: string; input?: unknown }) =>
    (issue.code === 'invalid_type' || issue.code === 'invalid_union') && issue.input !== undefined
      ? text
      : undefined;
}

export const jsonRpcCallSchema = z
  .strictObject(
    {
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string().max(MAX_ID_LENGTH), z.number()], {
        error: wrongValue(`must be a number or a string of at most ${MAX_ID_LENGTH} characters`),
      }),
      method: identifier('The MCP method, e.g. tools/call.'),
      params: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'For tools/call: `name` (equal to tool_name) and `arguments` (an object). At most 64 levels deep.',
        ),
    },
    {
      error: (issue) =>
        issue.code === 'invalid_type' && issue.input !== undefined
          ? 'must be a JSON-RPC 2.0 call object'
          : undefined,
    },
  )
  .describe('The JSON-RPC 2.0 call the agent wants to make, as it would be forwarded.');

export const inspectBodySchema = z
  .object({
    agent_id: identifier('The calling agent.'),
    execution_id: identifier("The agent's execution (run) this call belongs to."),
    server_id: identifier('The MCP server the call is for.'),
    tool_name: identifier('The tool called; for tools/call, equal to request.params.name.'),
    execution_mode: z
      .enum(EXECUTION_MODES)
      .describe('One of the modes the tenant allows (docs/inspect.md).'),
    policy: z
      .string({ error: wrongValue(`must be a policy URI string, ${POLICY_URI_FORM}`) })
      .regex(POLICY_URI_PATTERN, { error: `must be a policy URI, ${POLICY_URI_FORM}` })
      .optional()
      .describe('A pinned policy svc://name@version to evaluate besides the tenant pins.'),
    approval_id: identifier('Resubmission of a call held for approval.').optional(),
    agent_credential: z
      .record(z.string(), z.unknown(), {
        error: wrongValue('must be a JSON object (the credential as issued)'),
      })
      .optional()
      .describe(
        "The agent's identity credential (AgentIdentityCredential), or for a delegate the root of its chain; with the Agent-Proof header (docs/agentiam.md).",
      ),
    delegation_chain: z
      .array(z.unknown(), { error: wrongValue('must be an array of delegation credentials') })
      .max(MAX_CHAIN_LINKS)
      .optional()
      .describe(
        'For a delegate: the AgentDelegationCredentials from agent_credential to the caller, in order.',
      ),
    forward: z
      .boolean()
      .optional()
      .describe(
        'Default true. false: decide, audit, hold or deny as always, but never contact the upstream (the agent runs the tool itself); an allow answers forwarded: false without response.',
      ),
    request: jsonRpcCallSchema,
  })
  .meta({ title: 'Inspect request', description: 'A tool call to inspect (spec §2.1).' });

export type InspectBody = z.output<typeof inspectBodySchema>;

/**
 * What to send instead, per top-level field of the body: the hint of a MCP_MALFORMED_RPC answer
 * whose problem is in that field (the registry's hint covers a body that is not an object).
 */
export const INSPECT_FIELD_HINTS: Readonly<Record<string, string>> = (() => {
  const ids =
    'Send agent_id, execution_id, server_id and tool_name as non-empty strings of at most 256 characters (docs/inspect.md).';
  return {
    agent_id: ids,
    execution_id: ids,
    server_id: ids,
    tool_name: `${ids} For tools/call, tool_name is request.params.name.`,
    execution_mode: `Set execution_mode to one of ${EXECUTION_MODES.join(', ')} (and one the tenant's gateway policy allows).`,
    policy: `Leave policy out, or name a published policy version as ${POLICY_URI_FORM}, e.g. svc://my-policy@1.0.0.`,
    approval_id:
      'Send approval_id only to resubmit a held call: the approval.id of its 202 answer.',
    agent_credential:
      'Send agent_credential as the identity credential object exactly as issued (docs/agentiam.md), or leave it out.',
    delegation_chain: `Send delegation_chain as an array of at most ${MAX_CHAIN_LINKS} delegation credentials, root side first, or leave it out.`,
    forward:
      'Leave forward out (the gateway forwards an allowed call), or send false when the agent runs the tool itself.',
    request:
      'Send the JSON-RPC 2.0 call in request: {"jsonrpc":"2.0","id":…,"method":…,"params":{…}}, for tools/call params.name and params.arguments (an object).',
  };
})();

/** The body's JSON Schema for the OpenAPI document (2020-12, as OpenAPI 3.1 reads it). */
export const inspectBodyJsonSchema: Record<string, unknown> = (() => {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(inspectBodySchema, {
    target: 'draft-2020-12',
    io: 'input',
    override: ({ jsonSchema: node }) => {
      // Object keys are strings in JSON: zod's propertyNames for records only adds noise.
      if (node.type === 'object') delete node.propertyNames;
    },
  });
  return jsonSchema;
})();
