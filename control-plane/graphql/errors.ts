// The one GraphQL error mapping (yoga's `maskError`): only deliberate errors reach clients.
// Resolvers, scalars and the scope check throw GatewayError (built with gatewayError from the
// registry in shared/errors); its code, message and hint go to the client as they are. Input
// validation failures become REQUEST_INVALID with every issue (`extensions.issues`, also for the
// issues a resolver's check reports); a unique-constraint violation becomes REQUEST_INVALID
// naming the field whose value already exists; a GraphQLError raised with a registry code by a
// library keeps it, with the registry's hint; anything else is logged and answered as
// INTERNAL_ERROR without its message. Errors clients are expected to handle as data (an invalid
// gateway policy, an invalid NPL document) are not thrown to here: they are typed results of
// their mutation (schema/errors.ts).
import { InputValidationError } from '@pothos/plugin-validation';
import { GraphQLError, Kind } from 'graphql';
import type { Logger } from 'pino';
import { Prisma } from '../../prisma/generated/client/client.js';
import { ERROR_CODES, GatewayError, gatewayError, isErrorCode } from '../../shared/errors/index.js';
import { invalidField, requestInvalid } from '../../shared/validation/field-issues.js';

/**
 * By tag, not `instanceof`: graphql ships CommonJS and ESM builds, and a test runner may load
 * the other one than the libraries do, so the classes differ while the errors are the same.
 */
function isGraphQLError(error: unknown): error is GraphQLError {
  return Object.prototype.toString.call(error) === '[object GraphQLError]';
}

/** What yoga sends for `error`; `logger` hears about the unexpected ones. */
export function maskError(error: unknown, logger?: Logger): Error {
  if (!isGraphQLError(error)) return unexpected(error, undefined, logger);
  const original = causeOf(error);
  // Parse and validation errors, and errors raised by yoga itself, carry no original error.
  if (original === undefined || original === null) return error;
  const located = {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
  };
  if (original instanceof GatewayError) return fromGatewayError(original, located);
  const misused = describeArgumentMistake(error, original);
  if (misused !== null) return fromGatewayError(misused, located);
  // Before the GraphQLError case: a validation error is a GraphQLError without a code.
  if (original instanceof InputValidationError) {
    const issues = original.issues.map((issue) => ({
      field: (issue.path ?? [])
        .map((segment) => (typeof segment === 'object' ? String(segment.key) : String(segment)))
        .join('.'),
      message: issue.message,
    }));
    return fromGatewayError(
      gatewayError('REQUEST_INVALID', { problem: original.message }),
      located,
      {
        issues,
      },
    );
  }
  if (isGraphQLError(original)) {
    const code = original.extensions.code;
    if (isErrorCode(code)) {
      return new GraphQLError(original.message, {
        ...located,
        extensions: { ...original.extensions, hint: ERROR_CODES[code].hint },
      });
    }
    return unexpected(original, error, logger);
  }
  if (original instanceof Prisma.PrismaClientKnownRequestError && original.code === 'P2002') {
    return fromGatewayError(alreadyExists(original, error), located);
  }
  return unexpected(original, error, logger);
}

/**
 * A client's mistake in an argument that graphql-js or a Pothos plugin reports without a code,
 * as REQUEST_INVALID naming the argument; null for anything else. graphql-js coerces variables
 * before execution (a required input field missing, a value of the wrong type): its error sits
 * on the variable definition and wraps a code-less GraphQLError of its own. The relay and Prisma
 * plugins refuse connection arguments (a negative `first`, a malformed cursor) with a
 * PothosValidationError while the field resolves; other PothosValidationErrors are the
 * schema's own faults and stay unexpected.
 */
function describeArgumentMistake(error: GraphQLError, original: unknown): GatewayError | null {
  if (!isGraphQLError(original) || original.extensions.code !== undefined) return null;
  const definition = error.nodes?.[0];
  if (definition?.kind === Kind.VARIABLE_DEFINITION && original.originalError == null) {
    const missing = /^Field "([^"]+)" of required type/.exec(original.message)?.[1];
    const at = /got invalid value .* at "([^"]+)"/.exec(error.message)?.[1];
    const base = at ?? definition.variable.name.value;
    const field = `$${missing === undefined ? base : `${base}.${missing}`}`;
    return invalidField(field, original.message);
  }
  if (original.name !== 'PothosValidationError') return null;
  const field = error.nodes?.[0];
  if (field?.kind !== Kind.FIELD) return null;
  const given = new Set(field.arguments?.map((argument) => argument.name.value) ?? []);
  const named = /^Argument "(\w+)"/.exec(original.message)?.[1];
  if (named !== undefined && given.has(named)) {
    return invalidField(`${field.name.value}.${named}`, original.message);
  }
  if (/cursor/i.test(original.message)) {
    const cursor = ['after', 'before'].find((name) => given.has(name));
    if (cursor !== undefined) {
      return invalidField(`${field.name.value}.${cursor}`, 'is not a cursor of this connection');
    }
  }
  return null;
}

/**
 * A unique-constraint violation as REQUEST_INVALID naming the input field. Prisma names the
 * columns in `meta.target`, or, through a driver adapter, in the database error it wraps. The
 * tenant column of a per-tenant constraint is not something the caller sent, so it is left out;
 * a field is under `input.` when the mutation takes its fields as an `input` argument.
 */
function alreadyExists(
  error: Prisma.PrismaClientKnownRequestError,
  located: GraphQLError,
): GatewayError {
  const meta = error.meta as
    | {
        target?: unknown;
        modelName?: unknown;
        driverAdapterError?: {
          cause?: { constraint?: { fields?: unknown; index?: unknown }; table?: unknown };
        };
      }
    | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const columns =
    meta?.target ??
    cause?.constraint?.fields ??
    columnsOfIndex(cause?.constraint?.index, cause?.table);
  // A driver adapter reports mixed-case columns as quoted SQL identifiers ("publicKey").
  const names = (Array.isArray(columns) ? columns : typeof columns === 'string' ? [columns] : [])
    .map((column) => String(column).replace(/^"(.*)"$/, '$1'))
    .filter((column) => column !== 'tenantId');
  const taken = `is already taken by another ${typeof meta?.modelName === 'string' ? meta.modelName : 'record'}`;
  if (names.length === 0) return invalidField('(input)', `has a value that ${taken}`);
  const underInput = located.nodes?.some(
    (node) =>
      node.kind === 'Field' && node.arguments?.some((argument) => argument.name.value === 'input'),
  );
  return requestInvalid(
    names.map((name) => ({ field: underInput ? `input.${name}` : name, message: taken })),
  );
}

/**
 * The columns of a unique index named as Prisma names them, `<table>_<column>_<column>_key`: what
 * PostgreSQL reports through the pg driver adapter, which gives the index but not its fields. The
 * schema's columns are camelCase, so `_` separates them.
 */
function columnsOfIndex(index: unknown, table: unknown): string[] | undefined {
  if (typeof index !== 'string' || typeof table !== 'string') return undefined;
  if (!index.startsWith(`${table}_`) || !index.endsWith('_key')) return undefined;
  return index.slice(table.length + 1, -'_key'.length).split('_');
}

/**
 * The error a resolver or scalar threw. graphql-js wraps a scalar's error in a GraphQLError
 * without a code once more when it coerces a variable, so wrappers without a code are skipped.
 */
function causeOf(error: GraphQLError): unknown {
  let cause: unknown = error.originalError;
  while (isGraphQLError(cause) && cause.extensions.code === undefined && cause.originalError) {
    cause = cause.originalError;
  }
  return cause;
}

type Location = Pick<GraphQLError, 'nodes' | 'source' | 'positions' | 'path'>;

/**
 * A GatewayError as a GraphQLError, for code that runs where graphql-js reports GraphQLErrors
 * as they are and wraps anything else without a code: literal parsing in a scalar, at validation.
 */
export function toGraphQLError(error: GatewayError): GraphQLError {
  return fromGatewayError(error, {});
}

/**
 * The client's view of a GatewayError: its registry code and hint, and its details if any. Field
 * issues go to `extensions.issues`, where input validation puts them, whoever found them.
 */
function fromGatewayError(
  error: GatewayError,
  located: Partial<Location>,
  extra: Record<string, unknown> = {},
): GraphQLError {
  const { issues, ...details } = error.details ?? {};
  return new GraphQLError(error.message, {
    ...located,
    extensions: {
      code: error.code,
      hint: error.hint,
      ...(Object.keys(details).length > 0 ? { details } : {}),
      ...(issues === undefined ? {} : { issues }),
      ...extra,
    },
  });
}

function unexpected(
  error: unknown,
  located: GraphQLError | undefined,
  logger?: Logger,
): GraphQLError {
  logger?.error({ err: error, path: located?.path }, 'unexpected GraphQL error');
  return new GraphQLError('Unexpected error.', {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
    extensions: { code: 'INTERNAL_ERROR' },
  });
}
