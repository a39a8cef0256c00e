// Errors a client is expected to handle as data: typed members of a mutation's result union
// (plugin-errors), each listing every problem found, not just the first.

import { formatIssuePath, NplError, type NplIssue } from '../../../shared/npl/index.js';
import type { FieldIssue } from '../../services/gateway-policy.js';
import { builder } from '../builder.js';

/** A gateway policy patch with invalid fields: one issue per field. */
export class GatewayPolicyValidationError extends Error {
  readonly issues: readonly FieldIssue[];
  constructor(issues: readonly FieldIssue[]) {
    super(issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '));
    this.name = 'GatewayPolicyValidationError';
    this.issues = issues;
  }
}

export const ProblemInterface = builder
  .interfaceRef<Error & { code?: string }>('Problem')
  .implement({
    description: 'A typed error returned as data by a mutation.',
    fields: (t) => ({
      message: t.exposeString('message'),
      code: t.string({
        description: 'Stable code: REQUEST_INVALID or one of the NPL engine codes.',
        resolve: (error) => error.code ?? 'REQUEST_INVALID',
      }),
    }),
  });

const FieldIssueRef = builder.objectRef<FieldIssue>('FieldIssue').implement({
  description: 'One invalid input field: `field` is a path such as `allowedModes[1]`.',
  fields: (t) => ({
    field: t.exposeString('field'),
    message: t.exposeString('message'),
  }),
});

builder.objectType(GatewayPolicyValidationError, {
  name: 'GatewayPolicyValidationError',
  interfaces: [ProblemInterface],
  fields: (t) => ({
    issues: t.field({ type: [FieldIssueRef], resolve: (error) => [...error.issues] }),
  }),
});

const SourcePositionRef = builder
  .objectRef<{ line: number; column: number }>('SourcePosition')
  .implement({
    fields: (t) => ({ line: t.exposeInt('line'), column: t.exposeInt('column') }),
  });

const NplIssueRef = builder.objectRef<NplIssue>('NplIssue').implement({
  description: 'One problem the NPL engine found in a document.',
  fields: (t) => ({
    code: t.exposeString('code'),
    message: t.exposeString('message'),
    path: t.string({
      description: 'JSON path inside the document, e.g. `rules[0].condition` (`$` for the root).',
      resolve: (issue) => formatIssuePath(issue.path),
    }),
    hint: t.string({ nullable: true, resolve: (issue) => issue.hint ?? null }),
    ruleIndex: t.int({ nullable: true, resolve: (issue) => issue.ruleIndex ?? null }),
    line: t.int({
      nullable: true,
      description: '1-based line inside the condition text.',
      resolve: (issue) => issue.line ?? null,
    }),
    column: t.int({
      nullable: true,
      description: '1-based column inside the condition text.',
      resolve: (issue) => issue.column ?? null,
    }),
    excerpt: t.string({ nullable: true, resolve: (issue) => issue.excerpt ?? null }),
    source: t.field({
      type: SourcePositionRef,
      nullable: true,
      description: 'Position in the YAML/JSON text the document was published from.',
      resolve: (issue) => issue.source ?? null,
    }),
  }),
});

builder.objectType(NplError, {
  name: 'NplDocumentError',
  description: 'The NPL document is invalid; `issues` lists every problem with its position.',
  interfaces: [ProblemInterface],
  fields: (t) => ({
    issues: t.field({ type: [NplIssueRef], resolve: (error) => [...error.issues] }),
  }),
});
