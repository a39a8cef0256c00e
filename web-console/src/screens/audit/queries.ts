// The audit trail's GraphQL operations: one entry fragment shared by the page query, the live
// tail and the export, so every entry on screen has the same fields whichever way it arrived
// (with the names of its agent, actor and resource, which the server reads per page); and the
// agents the agent filter offers; and where the trail is anchored (the latest signed checkpoint
// and each checkpoint sink).
import { graphql, type ResultOf } from '../../graphql.ts';

export const AuditEntryFields = graphql(`
  fragment AuditEntryFields on AuditEntry @_unmask {
    id
    seq
    createdAt
    action
    resourceType
    resourceId
    metadata
    hash
    prevHash
    resourceName
    agent { kind id name }
    actor { kind id name }
  }
`);

export type AuditEntry = ResultOf<typeof AuditEntryFields>;

export const AuditTrailQuery = graphql(
  `
  query ConsoleAuditTrail(
    $action: String
    $agentId: ID
    $agent: String
    $decision: String
    $from: DateTime
    $to: DateTime
    $first: Int
    $after: String
  ) {
    auditTrail(
      action: $action
      agentId: $agentId
      agent: $agent
      decision: $decision
      from: $from
      to: $to
      first: $first
      after: $after
    ) {
      edges { node { ...AuditEntryFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
`,
  [AuditEntryFields],
);

export const AuditTrailSubscription = graphql(
  `
  subscription ConsoleAuditTail(
    $action: String
    $agentId: ID
    $agent: String
    $decision: String
    $from: DateTime
    $to: DateTime
  ) {
    auditTrail(
      action: $action
      agentId: $agentId
      agent: $agent
      decision: $decision
      from: $from
      to: $to
    ) {
      ...AuditEntryFields
    }
  }
`,
  [AuditEntryFields],
);

export type AuditSubject = NonNullable<AuditEntry['agent']>;

export const AuditAgentsQuery = graphql(`
  query ConsoleAuditAgents($search: String) {
    auditAgents(search: $search) { kind id name }
  }
`);

export const VerifyAuditTrailQuery = graphql(`
  query ConsoleVerifyAuditTrail($from: DateTime, $to: DateTime) {
    verifyAuditTrail(from: $from, to: $to) {
      ok
      count
      head
      partial
      firstBroken { index id code message }
      checkpoint {
        ok
        status
        treeSize
        rootHash
        createdAt
        signedBy
        cosignedBy
        anchoredEntries
        findings { code message }
      }
    }
  }
`);

export type AuditVerification = ResultOf<typeof VerifyAuditTrailQuery>['verifyAuditTrail'];

export const AuditAnchoringQuery = graphql(`
  query ConsoleAuditAnchoring {
    auditCheckpoint { treeSize rootHash createdAt cosignedBy verifierKey }
    auditSinks {
      name
      kind
      delivered
      backlog
      anchoredTreeSize
      anchoredAt
      lastError
      lastErrorAt
    }
  }
`);

export type AuditAnchoring = ResultOf<typeof AuditAnchoringQuery>;
export type AuditSinkState = AuditAnchoring['auditSinks'][number];

export const CutAuditCheckpointMutation = graphql(`
  mutation ConsoleCutAuditCheckpoint {
    cutAuditCheckpoint { treeSize }
  }
`);
