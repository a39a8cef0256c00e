// Who may introspect the schema. yoga's disable-introspection plugin asks per request; the answer
// is a plain function so it is testable alone. Introspection is on for an authenticated API key
// (GraphiQL and client generators need it, and every key already sees the schema's shape through
// its answers), off for any request without one, and off for everyone when the operator sets
// AGENT_GATEWAY_GRAPHQL_INTROSPECTION=false (read with every setting in runtime/config.ts, passed
// in as `enabled`).
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import type { Plugin } from 'graphql-yoga';

/** True when this request must not introspect: the switch is off, or no key authenticated it. */
export function isIntrospectionDisabled(enabled: boolean, authenticated: boolean): boolean {
  return !enabled || !authenticated;
}

export interface IntrospectionOptions<ServerContext> {
  /** The operator's switch (the configuration's graphqlIntrospection; on by default). */
  readonly enabled: boolean;
  /** Whether the API key of the request behind `serverContext` was authenticated. */
  readonly isAuthenticated: (serverContext: ServerContext) => boolean;
}

/** The yoga plugin deciding introspection per HTTP request. */
export function useIntrospectionSwitch<ServerContext>(
  options: IntrospectionOptions<ServerContext>,
): Plugin {
  return useDisableIntrospection({
    isDisabled: (_request, serverContext) =>
      isIntrospectionDisabled(
        options.enabled,
        options.isAuthenticated(serverContext as ServerContext),
      ),
  });
}
