// The GraphQL operations of the Policies screen, typed from schema/schema.graphql by gql.tada. All
// of them need policies:manage (control-plane/graphql/schema/npl-policies.ts, gateway-policy.ts).
import { graphql } from '../../graphql.ts';

export const NplIssueFields = graphql(`
  fragment NplIssueFields on NplIssue @_unmask {
    code
    message
    path
    hint
    line
    column
    source {
      line
      column
    }
  }
`);

export const PolicyVersionsQuery = graphql(`
  query PolicyVersions {
    nplPolicyVersions {
      id
      name
      version
      uri
      contentHash
      publishedAt
      publishedBy
      description
      source
    }
    gatewayPolicy {
      pinnedPolicies
    }
  }
`);

export const PublishPolicyMutation = graphql(
  `
  mutation PublishPolicy($source: String!) {
    publishNplPolicy(input: { source: $source }) {
      __typename
      ... on MutationPublishNplPolicySuccess {
        data {
          created
          uri
          warnings {
            ...NplIssueFields
          }
        }
      }
      ... on NplDocumentError {
        code
        message
        issues {
          ...NplIssueFields
        }
      }
    }
  }
`,
  [NplIssueFields],
);

export const PublishPreviewQuery = graphql(
  `
  query PublishPreview($source: String!) {
    nplPublishPreview(input: { source: $source }) {
      __typename
      ... on QueryNplPublishPreviewSuccess {
        data {
          uri
          warnings {
            ...NplIssueFields
          }
        }
      }
    }
  }
`,
  [NplIssueFields],
);

export const PinPolicyMutation = graphql(`
  mutation PinPolicy($uri: String!, $replaces: String) {
    pinNplPolicy(uri: $uri, replaces: $replaces)
  }
`);

export const UnpinPolicyMutation = graphql(`
  mutation UnpinPolicy($uri: String!) {
    unpinNplPolicy(uri: $uri)
  }
`);

export const GatewayPolicyFields = graphql(`
  fragment GatewayPolicyFields on GatewayPolicy @_unmask {
    trustedServers
    blockedMethods
    blockedTools
    denyDestructive
    destructiveToolPatterns
    exfilDetectSecrets
    exfilCheckDestinations
    exfilAllowedDomains
    exfilBulkExportLimit
    allowedModes
    proxyExecutionMode
    proxyModeHeader
    approvalTtlSeconds
    approvalWaitSeconds
    maxDelegationDepth
    oauthMode
    toolPinning
    requireAgentIdentity
    limits {
      limitId
      per
      tools
      servers
      windowSeconds
      maxCalls
      sumArgument
      maxSum
      action
    }
    updatedAt
    updatedBy
  }
`);

export const GatewayPolicyQuery = graphql(
  `
  query GatewayPolicy {
    gatewayPolicy {
      ...GatewayPolicyFields
    }
  }
`,
  [GatewayPolicyFields],
);

export const UpdateGatewayPolicyMutation = graphql(
  `
  mutation UpdateGatewayPolicy($input: GatewayPolicyInput!) {
    updateGatewayPolicy(input: $input) {
      __typename
      ... on MutationUpdateGatewayPolicySuccess {
        data {
          ...GatewayPolicyFields
        }
        warnings {
          code
          field
          message
        }
      }
      ... on GatewayPolicyValidationError {
        code
        message
        issues {
          field
          message
        }
      }
    }
  }
`,
  [GatewayPolicyFields],
);
