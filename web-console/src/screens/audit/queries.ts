// The audit trail's GraphQL operations: one entry fragment shared by the page query, the live
// tail and the export, so every entry on screen has the same fields whichever way it arrived.
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
  }
`);

export type AuditEntry = ResultOf<typeof AuditEntryFields>;

export const AuditTrailQuery = graphql(
  `
  query ConsoleAuditTrail(
    $action: String
    $agentId: ID
    $decision: String
    $from: DateTime
    $to: DateTime
    $first: Int
    $after: String
  ) {
    auditTrail(
      action: $action
      agentId: $agentId
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
    $decision: String
    $from: DateTime
    $to: DateTime
  ) {
    auditTrail(action: $action, agentId: $agentId, decision: $decision, from: $from, to: $to) {
      ...AuditEntryFields
    }
  }
`,
  [AuditEntryFields],
);

export const VerifyAuditTrailQuery = graphql(`
  query ConsoleVerifyAuditTrail($from: DateTime, $to: DateTime) {
    verifyAuditTrail(from: $from, to: $to) {
      ok
      count
      head
      partial
      firstBroken { index id code message }
    }
  }
`);

export type AuditVerification = ResultOf<typeof VerifyAuditTrailQuery>['verifyAuditTrail'];
