// Zod rules for GraphQL inputs that several domains share, given to Pothos' validation plugin
// (`validate:`). A failure becomes REQUEST_INVALID listing every wrong field (errors.ts), before
// any resolver runs. Rules of a domain record that other entry points also obey live beside the
// domain in shared/ (shared/agents/agent-rules.ts).
import { z } from 'zod';
import { ALL_SCOPES, type Scope } from '../../shared/identity/scopes.js';
import { parsePolicyUri } from '../../shared/npl/index.js';

/** A JSON object (not an array, not a scalar): tool name -> value maps, NPL documents. */
export const jsonObjectRule = z.record(z.string(), z.unknown(), {
  error: 'must be a JSON object',
});

/** One or more API key scopes, each one of ALL_SCOPES. */
export const scopeListRule = z
  .array(z.enum(ALL_SCOPES as readonly [Scope, ...Scope[]], { error: 'is not a known scope' }))
  .min(1, 'must list at least one scope');

/** A policy URI pinned to a version, svc://name@version; the message says what is wrong. */
export const policyUriRule = z.string().superRefine((uri, context) => {
  try {
    parsePolicyUri(uri);
  } catch (error) {
    context.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/**
 * Arguments holding a time range [from, to): from must not be after to (either may be left out).
 * Loose: the validated arguments replace the field's arguments, so the others must pass through.
 */
export const timeRangeRule = z
  .looseObject({ from: z.date().nullish(), to: z.date().nullish() })
  .refine(({ from, to }) => !from || !to || from.getTime() <= to.getTime(), {
    message: 'from must not be after to',
    path: ['from'],
  });
