// The approval queue's GraphQL operations. A held call is shown from `maskedArguments` only: the
// raw `arguments` may carry the very secrets the detectors mask, so the console never asks for them.
// A call held by a usage limit carries the limit and its usage then (`limit`) instead of a rule.
import { graphql, type ResultOf } from '../../graphql.ts';

export const HeldCallFields = graphql(`
  fragment HeldCallFields on Approval {
    id
    status
    agentId
    agent { id name }
    serverId
    toolName
    method
    maskedArguments
    ruleId
    policyUri
    limit { limitId per windowSeconds used max requested resetsAt }
    reason
    createdAt
    expiresAt
    clientWaitingUntil
  }
`);

export type HeldCall = ResultOf<typeof HeldCallFields>;

// No `first`: the API's cost limit counts `first` as a multiplier, so the default page (50) is
// read and further pages are followed by cursor.
export const PendingApprovalsQuery = graphql(
  `
  query PendingApprovals($after: String) {
    approvals(status: PENDING, after: $after) {
      edges { node { ...HeldCallFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
`,
  [HeldCallFields],
);

// Unfiltered by status: CREATED events add a call, RESOLVED ones (decided by anyone) remove it,
// WAITING ones update whether a client waits for it.
export const ApprovalQueueSubscription = graphql(
  `
  subscription ApprovalQueue {
    approvalQueue {
      kind
      approval { ...HeldCallFields }
    }
  }
`,
  [HeldCallFields],
);

// One approval, whatever its status: the page an agent's link opens (approval-page.tsx).
export const ApprovalQuery = graphql(
  `
  query OneApproval($id: ID!) {
    approval(id: $id) {
      ...HeldCallFields
      decidedAt
      decidedBy
      decisionReason
      usedAt
    }
  }
`,
  [HeldCallFields],
);

export const ApproveMutation = graphql(`
  mutation ApproveHeldCall($id: ID!, $reason: String) {
    approveApproval(id: $id, reason: $reason) { id status }
  }
`);

export const RejectMutation = graphql(`
  mutation RejectHeldCall($id: ID!, $reason: String) {
    rejectApproval(id: $id, reason: $reason) { id status }
  }
`);
