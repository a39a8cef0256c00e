// The GraphQL operations of the Agents screen, typed from schema/schema.graphql by gql.tada. The
// kill answer is a fragment: the kill mutation, Agent.kill and the agentEvents stream all carry it.
import { graphql, type ResultOf } from '../../graphql.ts';

export const KillAnswerFragment = graphql(`
  fragment KillAnswer on AgentKill {
    killId
    killedAt
    reason
    auditId
    revoked { credentials delegations oauthClients tokens }
    rejectedApprovals
    abortedExecutions
    propagation { dataPlanes confirmed slowestMs confirmedBy controlPlaneReached }
  }
`);

export const AgentsQuery = graphql(`
  query ConsoleAgents($status: String, $after: String) {
    agents(status: $status, first: 100, after: $after) {
      edges { node { id name role status createdAt publicKey } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

export type AgentRow = ResultOf<typeof AgentsQuery>['agents']['edges'][number]['node'];

export const AgentEventsSubscription = graphql(`
  subscription ConsoleAgentEvents {
    agentEvents {
      change
      agentId
      agent { id name role status createdAt publicKey }
    }
  }
`);

export const AgentDetailQuery = graphql(
  `
  query ConsoleAgent($id: ID!) {
    agent(id: $id) {
      id name role status createdAt publicKey did
      systemPrompt personaTone personaLanguage allowedTools mcpAudiences executionMode
      killedAt killedReason
      parent { id name status }
      identityCredentials(first: 20) {
        edges { node { id status issuedAt expiresAt revokedAt revokedReason } }
      }
      kill { ...KillAnswer }
    }
    oauthClients(agentId: $id, includeRevoked: true, first: 20) {
      edges { node { id name resources createdAt revokedAt tokenEndpointAuthMethod } }
    }
  }
`,
  [KillAnswerFragment],
);

export type AgentDetail = NonNullable<ResultOf<typeof AgentDetailQuery>['agent']>;

// What each usage limit counted for the agent in its current window (docs/limits.md). Its own
// query: the page reads it again on its own (Refresh, or when a window ends).
export const AgentUsageQuery = graphql(`
  query ConsoleAgentUsage($id: ID!) {
    agent(id: $id) {
      id
      usage {
        limitId per action toolName
        calls maxCalls sum maxSum
        windowStartsAt resetsAt
      }
    }
  }
`);

export type LimitUsageRow = NonNullable<ResultOf<typeof AgentUsageQuery>['agent']>['usage'][number];

// Entries about the agent (denies, kills: resourceId is the agent) and the holds (approval
// entries, whose resource is the approval: filtered by metadata.agentId on the page).
export const AgentDecisionsQuery = graphql(`
  query ConsoleAgentDecisions($agentId: ID!) {
    onAgent: auditTrail(agentId: $agentId, first: 50) {
      edges { node { id seq action createdAt metadata } }
    }
    holds: auditTrail(action: "approval.requested", first: 100) {
      edges { node { id seq action createdAt metadata } }
    }
  }
`);

export type DecisionEntry = ResultOf<
  typeof AgentDecisionsQuery
>['onAgent']['edges'][number]['node'];

export const McpServerIdsQuery = graphql(`
  query ConsoleMcpServerIds { mcpServers { serverId } }
`);

export const SpawnAgentMutation = graphql(`
  mutation ConsoleSpawnAgent($input: SpawnAgentInput!) {
    spawnAgent(input: $input) {
      agent { id name }
      privateKeyJwk
      credentialId
      expiresAt
      oauth { clientId clientSecret tokenEndpoint }
    }
  }
`);

export type SpawnAnswer = ResultOf<typeof SpawnAgentMutation>['spawnAgent'];

export const KillAgentMutation = graphql(
  `
  mutation ConsoleKillAgent($agentId: ID!, $reason: String!) {
    killAgent(agentId: $agentId, reason: $reason) { ...KillAnswer }
  }
`,
  [KillAnswerFragment],
);

/** The kill of a key that cannot read agents: by id or public key, whichever it has. */
export const KillAgentByIdentifierMutation = graphql(
  `
  mutation ConsoleKillAgentByIdentifier($agentId: ID, $publicKey: String, $reason: String!) {
    killAgent(agentId: $agentId, publicKey: $publicKey, reason: $reason) {
      agentId
      publicKey
      ...KillAnswer
    }
  }
`,
  [KillAnswerFragment],
);
