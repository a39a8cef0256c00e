// Errors a client is expected to handle as data: typed members of a mutation's result union
// (plugin-errors), each listing every problem found, not just the first.

import type { FieldIssue } from '../../../shared/gateway-policy/gateway-policy-fields.js';
import { formatIssuePath, NplError, type NplIssue } from '../../../shared/npl/index.js';
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
      message: t.exposeString('message', { description: 'What is wrong, for people.' }),
      code: t.string({
        description: 'Stable code: REQUEST_INVALID or one of the NPL engine codes.',
        resolve: (error) => error.code ?? 'REQUEST_INVALID',
      }),
    }),
  });

const FieldIssueRef = builder.objectRef<FieldIssue>('FieldIssue').implement({
  description: 'One invalid input field: `field` is a path such as `allowedModes[1]`.',
  fields: (t) => ({
    field: t.exposeString('field', {
      description: 'Path of the input field, e.g. allowedModes[1].',
    }),
    message: t.exposeString('message', { description: 'What is wrong with it.' }),
  }),
});

builder.objectType(GatewayPolicyValidationError, {
  name: 'GatewayPolicyValidationError',
  description: 'The gateway policy change is invalid; nothing was stored.',
  interfaces: [ProblemInterface],
  fields: (t) => ({
    issues: t.field({
      type: [FieldIssueRef],
      description: 'Every invalid field, one issue each.',
      resolve: (error) => [...error.issues],
    }),
  }),
});

const SourcePositionRef = builder
  .objectRef<{ line: number; column: number }>('SourcePosition')
  .implement({
    description: 'A position in a text.',
    fields: (t) => ({
      line: t.exposeInt('line', { description: '1-based line.' }),
      column: t.exposeInt('column', { description: '1-based column.' }),
    }),
  });

/** An NPL issue: a problem of an invalid document, or a warning of a published one. */
export const NplIssueRef = builder.objectRef<NplIssue>('NplIssue').implement({
  description:
    'One finding of the NPL engine in a document: a problem (NplDocumentError.issues) or a ' +
    'warning that did not prevent publishing (PublishNplPolicyPayload.warnings).',
  fields: (t) => ({
    code: t.exposeString('code', {
      description: 'Stable code of the problem, e.g. condition_syntax (docs/npl.md).',
    }),
    message: t.exposeString('message', { description: 'What is wrong, for people.' }),
    path: t.string({
      description: 'JSON path inside the document, e.g. `rules[0].condition` (`$` for the root).',
      resolve: (issue) => formatIssuePath(issue.path),
    }),
    hint: t.string({
      nullable: true,
      description: 'How to fix it, when the engine knows; or null.',
      resolve: (issue) => issue.hint ?? null,
    }),
    ruleIndex: t.int({
      nullable: true,
      description: '0-based index of the rule concerned, or null for a document-level problem.',
      resolve: (issue) => issue.ruleIndex ?? null,
    }),
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
    excerpt: t.string({
      nullable: true,
      description: 'The part of the condition text around the problem, or null.',
      resolve: (issue) => issue.excerpt ?? null,
    }),
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
    issues: t.field({
      type: [NplIssueRef],
      description: 'Every problem the engine found.',
      resolve: (error) => [...error.issues],
    }),
  }),
});
