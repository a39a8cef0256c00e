// Findings about a valid gateway policy change that an operator most likely did not intend: the
// change is stored and published all the same, and updateGatewayPolicy returns them beside it
// (its `warnings`, GraphQL MutationWarning) for the console to show. Stable codes like the error
// registry's, but findings returned as data, not refusals, so they are not registry entries;
// docs/graphql.md lists them. Pure: the console may import it.

export const GATEWAY_POLICY_WARNING_CODES = {
  TRUSTED_SERVER_NOT_REGISTERED:
    'A trusted server id names no MCP server registered in the tenant (a typo, or a server not registered yet).',
} as const;

export type GatewayPolicyWarningCode = keyof typeof GATEWAY_POLICY_WARNING_CODES;

export interface GatewayPolicyWarning {
  readonly code: GatewayPolicyWarningCode;
  readonly message: string;
  /** The input field concerned, a path such as `trustedServers[1]`. */
  readonly field: string;
}

/** How many registered ids a warning names, so that a typo can be spotted beside them. */
const LISTED_IDS = 20;

/** One warning per trusted server id that no registered MCP server of the tenant has. */
export function findUnregisteredTrustedServers(
  trustedServers: readonly string[],
  registered: readonly string[],
): GatewayPolicyWarning[] {
  const known = new Set(registered);
  const listed =
    registered.length === 0
      ? 'none is registered yet'
      : `registered: ${registered.slice(0, LISTED_IDS).join(', ')}${registered.length > LISTED_IDS ? ` and ${registered.length - LISTED_IDS} more` : ''}`;
  return trustedServers.flatMap((serverId, index) =>
    known.has(serverId)
      ? []
      : [
          {
            code: 'TRUSTED_SERVER_NOT_REGISTERED' as const,
            field: `trustedServers[${index}]`,
            message: `no MCP server "${serverId}" is registered in this tenant (${listed}): the entry is stored, and calls reach a server under this id only once one is registered (registerMcpServer)`,
          },
        ],
  );
}
