// The one GraphQL error mapping (yoga's `maskError`): only deliberate errors reach clients.
// Deliberate means a GraphQLError carrying `extensions.code`, or a GatewayError, whose code, hint
// and details come from the registry in shared/errors. Input validation failures become
// REQUEST_INVALID with every issue; a unique-constraint violation becomes REQUEST_INVALID
// ("already exists"); anything else is logged and answered as INTERNAL_ERROR without its message.
// Errors clients are expected to handle as data (an invalid gateway policy, an invalid NPL
// document) are not thrown to here: they are typed results of their mutation (schema/errors.ts).
import { InputValidationError } from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { Prisma } from '../../prisma/generated/client/client.js';
import { ERROR_CODES, type ErrorCode, GatewayError } from '../../shared/errors/index.js';

/** A deliberate error with a registry code, for resolvers. */
export function graphQLError(
  code: ErrorCode,
  message: string,
  extensions: Record<string, unknown> = {},
): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code, hint: ERROR_CODES[code].hint, ...extensions },
  });
}

/** NOT_FOUND for anything the caller's tenant does not hold: other tenants' rows look absent. */
export function notFound(what: string): GraphQLError {
  return graphQLError('NOT_FOUND', `${what} not found`, {
    hint: "Use an id returned by this API for your API key's tenant.",
  });
}

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
  const original = error.originalError;
  // Parse and validation errors, and errors raised by yoga itself, carry no original error.
  if (original === undefined || original === null) return error;
  const located = {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
  };
  if (isGraphQLError(original)) {
    if (typeof original.extensions.code === 'string') {
      return new GraphQLError(original.message, { ...located, extensions: original.extensions });
    }
    return unexpected(original, error, logger);
  }
  if (original instanceof GatewayError) {
    return new GraphQLError(original.message, {
      ...located,
      extensions: {
        code: original.code,
        hint: original.hint,
        ...(original.details ? { details: original.details } : {}),
      },
    });
  }
  if (original instanceof InputValidationError) {
    const issues = original.issues.map((issue) => ({
      field: (issue.path ?? [])
        .map((segment) => (typeof segment === 'object' ? String(segment.key) : String(segment)))
        .join('.'),
      message: issue.message,
    }));
    return new GraphQLError(original.message, {
      ...located,
      extensions: { code: 'REQUEST_INVALID', hint: ERROR_CODES.REQUEST_INVALID.hint, issues },
    });
  }
  if (original instanceof Prisma.PrismaClientKnownRequestError && original.code === 'P2002') {
    return new GraphQLError('a record with this value already exists', {
      ...located,
      extensions: { code: 'REQUEST_INVALID', hint: ERROR_CODES.REQUEST_INVALID.hint },
    });
  }
  return unexpected(original, error, logger);
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
