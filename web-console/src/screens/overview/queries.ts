// The Overview's operations: decision counts reported by every data plane (decisionStats), the
// pending approvals, and the data planes with the configuration version each has applied.
import { graphql } from '../../graphql.ts';

export const DecisionStatsQuery = graphql(`
  query OverviewDecisionStats($windowMinutes: Int!) {
    decisionStats(windowMinutes: $windowMinutes) {
      windowMinutes
      since
      perMinute { minute counts { outcome count } clientErrors }
      totals { outcome count }
      clientErrors
      topDeniedTools { serverId toolName count }
      topReasonCodes { reasonCode count }
      reporters { dataPlaneId name lastReportedAt }
    }
  }
`);

export const PendingApprovalsQuery = graphql(`
  query OverviewPendingApprovals {
    approvals(status: PENDING, first: 100) {
      edges { node { id toolName serverId expiresAt agent { name } } }
      pageInfo { hasNextPage }
    }
  }
`);

export const DataPlanesQuery = graphql(`
  query OverviewDataPlanes {
    me { tenant { configVersion } }
    dataPlanes {
      id
      name
      address
      softwareVersion
      appliedSnapshotVersion
      connectedAt
      lastSeenAt
      revokedAt
    }
  }
`);
