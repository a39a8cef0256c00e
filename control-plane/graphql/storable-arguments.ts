// Arguments PostgreSQL could not store or compare: a string holding NUL or an unpaired surrogate
// anywhere in an operation's arguments — a literal, a variable, an input object field, or the
// value inside a connection cursor — is refused before anything runs, as REQUEST_INVALID naming
// the argument (`agent.id`, `createTenant.input.name`), instead of failing in the database as an
// unexpected error. The check is a plain function (findUnstorableArguments) the plugin wraps.
import { decodeBase64, decodeCursorChunk } from '@pothos/core';
import { type ArgumentNode, type DocumentNode, Kind, type ValueNode, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { gatewayError } from '../../shared/errors/index.js';
import { isStorableText } from '../../shared/text/storable-text.js';
import { toGraphQLError } from './errors.js';

const CURSOR_ARGUMENTS: ReadonlySet<string> = new Set(['after', 'before']);
const MESSAGE = 'must not contain NUL or an unpaired surrogate';

export interface ArgumentIssue {
  readonly field: string;
  readonly message: string;
}

/** Every argument of `document` whose value holds text PostgreSQL cannot store. */
export function findUnstorableArguments(
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  const fields: string[] = [];
  visit(document, {
    Field: {
      enter: (node) => {
        fields.push(node.name.value);
      },
      leave: () => {
        fields.pop();
      },
    },
    Argument: (node: ArgumentNode) => {
      const path = `${fields.at(-1) ?? ''}.${node.name.value}`;
      const cursor = CURSOR_ARGUMENTS.has(node.name.value);
      checkNode(node.value, path, cursor, variables ?? {}, issues);
    },
  });
  return issues;
}

function checkNode(
  node: ValueNode,
  path: string,
  cursor: boolean,
  variables: Readonly<Record<string, unknown>>,
  issues: ArgumentIssue[],
): void {
  switch (node.kind) {
    case Kind.STRING:
      if (!isStorableValue(node.value, cursor)) issues.push({ field: path, message: MESSAGE });
      return;
    case Kind.VARIABLE:
      checkValue(variables[node.name.value], path, cursor, 0, issues);
      return;
    case Kind.LIST:
      node.values.forEach((item, index) => {
        checkNode(item, `${path}.${index}`, cursor, variables, issues);
      });
      return;
    case Kind.OBJECT:
      for (const field of node.fields) {
        checkNode(field.value, `${path}.${field.name.value}`, false, variables, issues);
      }
      return;
    default:
      return;
  }
}

const MAX_DEPTH = 64;

function checkValue(
  value: unknown,
  path: string,
  cursor: boolean,
  depth: number,
  issues: ArgumentIssue[],
): void {
  if (typeof value === 'string') {
    if (!isStorableValue(value, cursor)) issues.push({ field: path, message: MESSAGE });
    return;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkValue(item, `${path}.${index}`, cursor, depth + 1, issues);
    });
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableText(key)) issues.push({ field: path, message: MESSAGE });
    else checkValue(item, `${path}.${key}`, false, depth + 1, issues);
  }
}

/** A cursor is checked inside as well: it carries the id the next page starts from. */
function isStorableValue(text: string, cursor: boolean): boolean {
  if (!isStorableText(text)) return false;
  if (!cursor) return true;
  let inner: unknown;
  try {
    const decoded = decodeBase64(text);
    inner = decoded.startsWith('GPC:') ? decodeCursorChunk(decoded.slice(4)) : decoded;
  } catch {
    return true; // Not a cursor at all: the connection itself refuses it.
  }
  return typeof inner !== 'string' || isStorableText(inner);
}

/** Refuses, before execution or subscription, an operation with unstorable text in an argument. */
export function useStorableArguments(): Plugin {
  const refusal = (document: DocumentNode, variables: Record<string, unknown> | undefined) => {
    const issues = findUnstorableArguments(document, variables);
    if (issues.length === 0) return null;
    const problem = issues.map((issue) => `${issue.field} ${issue.message}`).join('; ');
    return toGraphQLError(gatewayError('REQUEST_INVALID', { problem }, { details: { issues } }));
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = refusal(args.document, args.variableValues ?? undefined);
      if (error !== null) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = refusal(args.document, args.variableValues ?? undefined);
      if (error !== null) setResultAndStopExecution({ errors: [error] });
    },
  };
}
