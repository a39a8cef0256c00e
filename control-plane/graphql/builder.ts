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
import type { GraphQLResolveInfo } from 'graphql';
import { GraphQLDateTime, GraphQLJSON } from 'graphql-scalars';
import type PrismaTypes from '../../prisma/generated/pothos-types.js';
import { getDatamodel } from '../../prisma/generated/pothos-types.js';
import { gatewayError } from '../../shared/errors/index.js';
import type { Scope } from '../../shared/identity/scopes.js';
import type { GraphQLContext } from './context.js';
import { toGraphQLError } from './errors.js';

/** Largest page a connection returns, whatever `first`/`last` ask for. */
export const MAX_PAGE_SIZE = 100;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { scope: Scope; anyScope: readonly Scope[] };
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
    authScopes: (context) => ({
      scope: (scope: Scope) => context.caller.scopes.has(scope),
      // Read access open to more than one role (approvers and auditors both read the queue).
      anyScope: (scopes: readonly Scope[]) =>
        scopes.some((scope) => context.caller.scopes.has(scope)),
    }),
    unauthorizedError: (_parent, _context, info) =>
      gatewayError('AUTH_INSUFFICIENT_SCOPE', { scope: requiredScope(info) }),
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
  relay: {
    pageInfoTypeOptions: { description: 'Where a page of a connection starts and ends.' },
    hasNextPageFieldOptions: { description: 'Whether more items follow (ask with after).' },
    hasPreviousPageFieldOptions: { description: 'Whether items precede (ask with before).' },
    startCursorFieldOptions: { description: 'Cursor of the first edge; null on an empty page.' },
    endCursorFieldOptions: { description: 'Cursor of the last edge; null on an empty page.' },
    defaultConnectionTypeOptions: { description: 'One page of items, with where it ends.' },
    defaultEdgeTypeOptions: { description: 'One item of a page and its cursor.' },
    edgesFieldOptions: { description: 'The items of this page, in the order of the query.' },
    pageInfoFieldOptions: { description: 'Where this page starts and ends.' },
    cursorFieldOptions: { description: 'Opaque position of this item, for after and before.' },
    nodeFieldOptions: { description: 'The item.' },
    firstArgOptions: {
      description: `Items after the cursor to return; default 50, at most ${MAX_PAGE_SIZE}.`,
    },
    afterArgOptions: { description: 'Cursor to start after (an edge cursor or endCursor).' },
    lastArgOptions: { description: `Items before the cursor to return; at most ${MAX_PAGE_SIZE}.` },
    beforeArgOptions: { description: 'Cursor to end before (an edge cursor or startCursor).' },
  },
});

// The scalars are graphql-scalars' (RFC 3339 date-times, any JSON value). A malformed DateTime is
// the client's mistake: it answers REQUEST_INVALID like every other input error, not a bare
// GraphQL error that the error mapping would mask.
builder.addScalarType('DateTime', GraphQLDateTime, {
  description:
    'An instant: an RFC 3339 date-time with a zone on input (e.g. 2025-01-31T12:00:00Z or ' +
    '2025-01-31T13:00:00+01:00); always UTC with milliseconds on output.',
  parseValue: (value) => asRequestInvalid(() => GraphQLDateTime.parseValue(value)),
  parseLiteral: (ast, variables) =>
    asRequestInvalid(() => GraphQLDateTime.parseLiteral(ast, variables)),
});

builder.addScalarType('JSON', GraphQLJSON, {
  description: 'Any JSON value: an object, array, string, number, boolean or null.',
});

/** The scope a field declares (`{ scope }`, or `{ anyScope }`: any one of several). */
function requiredScope(info: GraphQLResolveInfo): string {
  const field = info.parentType.getFields()[info.fieldName];
  const options = field?.extensions?.pothosOptions as
    | { authScopes?: { scope?: string; anyScope?: readonly string[] } }
    | undefined;
  return options?.authScopes?.scope ?? options?.authScopes?.anyScope?.join(' or ') ?? 'unknown';
}

function asRequestInvalid(parse: () => Date): Date {
  try {
    return parse();
  } catch (error) {
    throw toGraphQLError(gatewayError('REQUEST_INVALID', { problem: (error as Error).message }));
  }
}

builder.queryType({
  description: "Reads, always inside the tenant of the request's API key.",
});
builder.mutationType({
  description:
    'Changes: each is committed, audited and published to the data plane before it answers.',
});
builder.subscriptionType({
  description: "Streams of the tenant's events over graphql-ws, on the same path.",
});
