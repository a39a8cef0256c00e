// Who may introspect the schema. yoga's disable-introspection plugin asks per request; the answer
// is a plain function so it is testable alone. Introspection is on for an authenticated API key
// (GraphiQL and client generators need it, and every key already sees the schema's shape through
// its answers), off for any request without one, and off for everyone when the operator sets
// AGENT_GATEWAY_GRAPHQL_INTROSPECTION=false.
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import type { Plugin } from 'graphql-yoga';

export const INTROSPECTION_ENV = 'AGENT_GATEWAY_GRAPHQL_INTROSPECTION';

/** `AGENT_GATEWAY_GRAPHQL_INTROSPECTION=false` (or 0/off/no) switches introspection off. */
export function readIntrospectionSwitch(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[INTROSPECTION_ENV]?.trim().toLowerCase();
  return !(value === 'false' || value === '0' || value === 'off' || value === 'no');
}

/** True when this request must not introspect: the switch is off, or no key authenticated it. */
export function isIntrospectionDisabled(enabled: boolean, authenticated: boolean): boolean {
  return !enabled || !authenticated;
}

export interface IntrospectionOptions<ServerContext> {
  /** The operator's switch (readIntrospectionSwitch by default in the server). */
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
