// The shape of an NPL policy document, once: document.ts validates with this schema and
// schema/npl-policy.schema.json is generated from it (print-json-schema.ts). What JSON Schema
// cannot say — unique ruleIds, conditions that parse — document.ts checks after the shape.
// Field order here is document order: issues are reported in it and the JSON Schema lists it.
import { z } from 'zod';
import { NPL_ACTIONS, NPL_SEVERITIES } from './types.js';
import { KEBAB_CASE, SEMVER } from './uri.js';

export const nplRuleSchema = z
  .strictObject({
    ruleId: z.string().min(1).describe('Unique within the policy; decisions name it.'),
    action: z.enum(NPL_ACTIONS).describe('What a match decides.'),
    condition: z
      .string()
      .min(1)
      .describe('An NPL condition over the call context (docs/npl.md, "Conditions").'),
    alertSeverity: z.enum(NPL_SEVERITIES).describe('The severity of the alert a match raises.'),
  })
  .describe('Rules are evaluated in document order; the first match decides.');

export const nplPolicySchema = z
  .strictObject({
    version: z
      .string()
      .regex(SEMVER)
      .describe('Semantic version major.minor.patch, without prerelease or build.'),
    policyName: z
      .string()
      .regex(KEBAB_CASE)
      .describe('kebab-case name; pins read svc://name@version.'),
    description: z.string().optional().describe('Free text for the people who read the policy.'),
    targetAgents: z
      .array(z.string().min(1))
      .min(1)
      .describe('Agent roles the policy applies to; "*" for every agent.'),
    rules: z.array(nplRuleSchema).min(1),
  })
  .meta({
    title: 'NPL policy document',
    description: 'A policy of the NPL v1.0 language, as YAML or JSON (docs/npl.md).',
  });

/** Allowed fields of a document and of a rule, in document order. */
export const NPL_POLICY_FIELDS: readonly string[] = Object.keys(nplPolicySchema.shape);
export const NPL_RULE_FIELDS: readonly string[] = Object.keys(nplRuleSchema.shape);
