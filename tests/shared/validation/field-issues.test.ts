// The one wording of request problems (shared/validation/field-issues.ts): plain words, the
// field by its path, ranges read from the schema, a schema's own refinement message kept.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  describeIssues,
  fieldIssues,
  requestInvalid,
  wordIssues,
} from '../../../shared/validation/field-issues.js';

const schema = z.strictObject({
  agent_id: z.string().min(1).max(256),
  ttl_seconds: z.int().min(60).max(2_592_000).optional(),
  ratio: z.number().min(0).optional(),
  name: z.string().min(2).max(10).optional(),
  mode: z.enum(['production', 'simulation']).optional(),
  tools: z.array(z.string().min(1)).min(1).max(2).optional(),
  persona: z.strictObject({ tone: z.string() }).optional(),
  reason: z
    .string()
    .refine((text) => text.trim() !== '', 'must not be blank')
    .optional(),
});

function issuesOf(body: unknown) {
  const parsed = schema.safeParse(body, { error: wordIssues(schema) });
  if (parsed.success) throw new Error('expected a refusal');
  return fieldIssues(parsed.error);
}

describe('the wording of request problems', () => {
  it.each([
    [{}, 'agent_id', 'is required'],
    [{ agent_id: 7 }, 'agent_id', 'must be a string, not 7'],
    [{ agent_id: '' }, 'agent_id', 'must not be empty'],
    [{ agent_id: 'x'.repeat(257) }, 'agent_id', 'must be at most 256 characters'],
    [
      { agent_id: 'a', ttl_seconds: 59 },
      'ttl_seconds',
      'must be an integer between 60 and 2592000',
    ],
    [
      { agent_id: 'a', ttl_seconds: 2_592_001 },
      'ttl_seconds',
      'must be an integer between 60 and 2592000',
    ],
    [
      { agent_id: 'a', ttl_seconds: 60.5 },
      'ttl_seconds',
      'must be an integer between 60 and 2592000, not 60.5',
    ],
    [
      { agent_id: 'a', ttl_seconds: '60' },
      'ttl_seconds',
      'must be an integer between 60 and 2592000, not a string',
    ],
    [
      { agent_id: 'a', ttl_seconds: null },
      'ttl_seconds',
      'must be an integer between 60 and 2592000, not null',
    ],
    [{ agent_id: 'a', ratio: -1 }, 'ratio', 'must be a number of at least 0'],
    [{ agent_id: 'a', name: 'n' }, 'name', 'must be 2 to 10 characters long'],
    [{ agent_id: 'a', mode: 'prod' }, 'mode', 'must be one of "production", "simulation"'],
    [{ agent_id: 'a', tools: [] }, 'tools', 'must not be empty'],
    [{ agent_id: 'a', tools: ['a', 'b', 'c'] }, 'tools', 'must list at most 2 items'],
    [{ agent_id: 'a', tools: ['a', ''] }, 'tools.1', 'must not be empty'],
    [{ agent_id: 'a', tools: 'a' }, 'tools', 'must be an array, not a string'],
    [
      { agent_id: 'a', persona: { tone: 't', voice: 'v' } },
      'persona.voice',
      'is not a field of this request (its fields: tone)',
    ],
    [{ agent_id: 'a', reason: ' ' }, 'reason', 'must not be blank'],
    [[], '(body)', 'must be a JSON object, not an array'],
  ])('%j: %s %s', (body, field, message) => {
    expect(issuesOf(body)).toContainEqual({ field, message });
  });

  it('says a missing enum or union field is required, not what it must match', () => {
    const required = z.object({ mode: z.enum(['a', 'b']), id: z.union([z.string(), z.number()]) });
    const parsed = required.safeParse({}, { error: wordIssues(required) });
    expect(parsed.success || fieldIssues(parsed.error)).toEqual([
      { field: 'mode', message: 'is required' },
      { field: 'id', message: 'is required' },
    ]);
  });

  it('lists every problem, an unknown key under its own name', () => {
    const issues = issuesOf({ ttl_seconds: 1, colour: 'red', shade: 'dark' });
    expect(issues.map((issue) => issue.field)).toEqual([
      'agent_id',
      'ttl_seconds',
      'colour',
      'shade',
    ]);
  });

  it('says them as one sentence per field, the body as "the body"', () => {
    expect(
      describeIssues([
        { field: 'reason', message: 'is required' },
        { field: '(body)', message: 'is not valid JSON' },
      ]),
    ).toBe('reason is required; the body is not valid JSON');
    expect(requestInvalid([{ field: 'reason', message: 'is required' }])).toMatchObject({
      code: 'REQUEST_INVALID',
      message: 'reason is required',
      details: { issues: [{ field: 'reason', message: 'is required' }] },
    });
  });
});
