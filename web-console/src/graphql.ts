// Typed GraphQL documents: gql.tada reads the introspection of schema/schema.graphql (generated into
// graphql-env.d.ts by `gql-tada generate output`, which the console's typecheck runs first), so an
// operation that no longer matches the schema fails `npm test`.
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.d.ts';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { DateTime: string; JSON: unknown };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
export { readFragment } from 'gql.tada';
