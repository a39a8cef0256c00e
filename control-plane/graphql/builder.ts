// Configures the Pothos builder, and only that: the context, the scalars, the scopes and the
// plugins. Domain types and fields live in schema/<domain>.ts; schema/index.ts builds the schema.
// Scopes: every field that is not a plain object field declares `authScopes`; the caller's scopes
// are loaded once per request from the context (the API key authenticated in server.ts).
import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLError, type GraphQLResolveInfo, Kind, valueFromASTUntyped } from 'graphql';
import type PrismaTypes from '../../prisma/generated/pothos-types.js';
import { getDatamodel } from '../../prisma/generated/pothos-types.js';
import { ERROR_CODES } from '../../shared/errors/index.js';
import type { Scope } from '../../shared/identity/scopes.js';
import type { GraphQLContext } from './context.js';

/** Largest page a connection returns, whatever `first`/`last` ask for. */
export const MAX_PAGE_SIZE = 100;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { scope: Scope };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, ValidationPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // A subscription is authorized once, when it starts: a refused one never opens.
    authorizeOnSubscribe: true,
    authScopes: (context) => ({ scope: (scope: Scope) => context.caller.scopes.has(scope) }),
    unauthorizedError: (_parent, _context, info) =>
      new GraphQLError(
        `${info.parentType.name}.${info.fieldName} needs scope ${requiredScope(info)}`,
        {
          extensions: {
            code: 'AUTH_INSUFFICIENT_SCOPE',
            hint: ERROR_CODES.AUTH_INSUFFICIENT_SCOPE.hint,
          },
        },
      ),
  },
  errors: { defaultTypes: [] },
  prisma: {
    client: (context) => context.db.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    maxConnectionSize: MAX_PAGE_SIZE,
    defaultConnectionSize: 50,
    onUnusedQuery: null,
  },
  relay: {},
});

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string with milliseconds and a zone (UTC on output).',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => parseDate(value),
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

/** The scope a field declares (every field here declares one `{ scope }`). */
function requiredScope(info: GraphQLResolveInfo): string {
  const field = info.parentType.getFields()[info.fieldName];
  const options = field?.extensions?.pothosOptions as
    | { authScopes?: { scope?: string } }
    | undefined;
  return options?.authScopes?.scope ?? 'unknown';
}

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value as string)) {
    throw new GraphQLError('DateTime must be an ISO 8601 date-time string', {
      extensions: { code: 'REQUEST_INVALID' },
    });
  }
  return date;
}

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
