// The MCP servers screen's GraphQL operations: the servers, their pinned tool definitions (all of
// them, and the held ones) and the changes to servers and pins.
import { graphql, type ResultOf } from '../../graphql.ts';

export const McpServerFields = graphql(`
  fragment McpServerFields on McpServer @_unmask {
    id
    serverId
    url
    transport
    mockResults
    toolDigests
    toolsRefreshedAt
    toolsRefreshError
    toolsRefreshFailedAt
    updatedAt
  }
`);

export type McpServer = ResultOf<typeof McpServerFields>;

export const McpServersQuery = graphql(
  `
  query ConsoleMcpServers {
    mcpServers { ...McpServerFields }
    toolDefinitionChanges { serverId toolName }
  }
`,
  [McpServerFields],
);

export const RegisterMcpServerMutation = graphql(
  `
  mutation ConsoleRegisterMcpServer($input: RegisterMcpServerInput!) {
    registerMcpServer(input: $input) { ...McpServerFields }
  }
`,
  [McpServerFields],
);

export const UpdateMcpServerMutation = graphql(
  `
  mutation ConsoleUpdateMcpServer($serverId: String!, $input: UpdateMcpServerInput!) {
    updateMcpServer(serverId: $serverId, input: $input) { ...McpServerFields }
  }
`,
  [McpServerFields],
);

export const RemoveMcpServerMutation = graphql(`
  mutation ConsoleRemoveMcpServer($serverId: String!) {
    removeMcpServer(serverId: $serverId)
  }
`);

export const ToolDefinitionFields = graphql(`
  fragment ToolDefinitionFields on ToolDefinition @_unmask {
    serverId
    toolName
    status
    held
    changedFields
    approvedDigest
    approvedDefinition
    approvedAt
    approvedBy
    observedDigest
    observedDefinition
    observedAt
  }
`);

export type ToolDefinition = ResultOf<typeof ToolDefinitionFields>;

export const ServerToolsQuery = graphql(
  `
  query ConsoleServerTools($serverId: String!) {
    toolDefinitions(serverId: $serverId) { ...ToolDefinitionFields }
    toolDefinitionChanges(serverId: $serverId) { ...ToolDefinitionFields }
  }
`,
  [ToolDefinitionFields],
);

export const ApproveToolDefinitionMutation = graphql(
  `
  mutation ConsoleApproveToolDefinition($input: ApproveToolDefinitionInput!) {
    approveToolDefinition(input: $input) { ...ToolDefinitionFields }
  }
`,
  [ToolDefinitionFields],
);

export const ToolDefinitionEventsSubscription = graphql(`
  subscription ConsoleToolDefinitionEvents {
    toolDefinitionEvents { change serverId toolName }
  }
`);
