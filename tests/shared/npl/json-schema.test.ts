import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUNDLED_POLICIES, safeParsePolicy } from '../../../shared/npl/index.js';
import {
  NPL_POLICY_SCHEMA_FILE,
  printNplPolicyJsonSchema,
} from '../../../shared/npl/print-json-schema.js';
import { propertyRuns } from '../../support/property-runs.js';

/** Issue codes about the document's shape, which the JSON Schema can express. */
const SHAPE_CODES = new Set([
  'invalid_type',
  'missing_field',
  'unknown_field',
  'invalid_value',
  'empty_list',
]);

const rule = fc.record(
  {
    ruleId: fc.oneof(fc.constantFrom('r1', 'r2', ''), fc.jsonValue()),
    action: fc.oneof(fc.constantFrom('ALLOW', 'BLOCK', 'DENY'), fc.jsonValue()),
    condition: fc.oneof(
      fc.constantFrom("tool.name == 'x'", '', 'tools.x', 'args.n >'),
      fc.jsonValue(),
    ),
    alertSeverity: fc.oneof(fc.constantFrom('LOW', 'CRITICAL', 'HIGH'), fc.jsonValue()),
    note: fc.jsonValue(),
  },
  { requiredKeys: ['ruleId', 'action', 'condition', 'alertSeverity'] },
);

const document = fc.record(
  {
    version: fc.oneof(fc.constantFrom('1.0.0', '10.2.3', '1.0', 'v1.0.0'), fc.jsonValue()),
    policyName: fc.oneof(fc.constantFrom('p', 'payments-guard', 'Bad_Name', ''), fc.jsonValue()),
    description: fc.oneof(fc.string(), fc.jsonValue()),
    targetAgents: fc.oneof(fc.constant(['*']), fc.array(fc.oneof(fc.string(), fc.jsonValue()))),
    rules: fc.oneof(fc.array(fc.oneof(rule, fc.jsonValue()), { maxLength: 3 }), fc.jsonValue()),
    owner: fc.jsonValue(),
  },
  { requiredKeys: ['version', 'policyName', 'targetAgents', 'rules'] },
);

describe('schema/npl-policy.schema.json', () => {
  it('is what the code generates, byte for byte', async () => {
    const committed = await readFile(NPL_POLICY_SCHEMA_FILE, 'utf8').catch(() => '');
    expect(
      committed === printNplPolicyJsonSchema(),
      'schema/npl-policy.schema.json is out of date: run `npm run schema:npl` and commit the result',
    ).toBe(true);
  });

  it('accepts the bundled policies', async () => {
    const jsonSchema = z.fromJSONSchema(JSON.parse(await readFile(NPL_POLICY_SCHEMA_FILE, 'utf8')));
    for (const policy of BUNDLED_POLICIES) expect(jsonSchema.safeParse(policy).success).toBe(true);
  });

  it('rejects exactly the documents parsePolicy finds a shape problem in', async () => {
    const jsonSchema = z.fromJSONSchema(JSON.parse(await readFile(NPL_POLICY_SCHEMA_FILE, 'utf8')));
    fc.assert(
      fc.property(document, (doc) => {
        const parsed = safeParsePolicy(doc);
        const shapeProblem =
          !parsed.success && parsed.error.issues.some((issue) => SHAPE_CODES.has(issue.code));
        expect(jsonSchema.safeParse(doc).success).toBe(!shapeProblem);
      }),
      { numRuns: propertyRuns(500) },
    );
  });
});
