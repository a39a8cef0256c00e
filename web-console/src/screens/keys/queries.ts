// The API keys screen's GraphQL operations: the tenant's keys (revoked ones too: the table shows
// their state), creating one (the answer holds its secret, once) and revoking one.
import { graphql, type ResultOf } from '../../graphql.ts';

export const ApiKeyFields = graphql(`
  fragment ApiKeyFields on ApiKey @_unmask {
    id
    name
    prefix
    scopes
    createdAt
    createdBy
    expiresAt
    revokedAt
    lastUsedAt
  }
`);

export type ApiKey = ResultOf<typeof ApiKeyFields>;

export const ApiKeysQuery = graphql(
  `
  query ConsoleApiKeys {
    apiKeys(includeRevoked: true) { ...ApiKeyFields }
  }
`,
  [ApiKeyFields],
);

export const CreateApiKeyMutation = graphql(
  `
  mutation ConsoleCreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      apiKey { ...ApiKeyFields }
      secret
    }
  }
`,
  [ApiKeyFields],
);

export type CreatedApiKey = ResultOf<typeof CreateApiKeyMutation>['createApiKey'];

export const RevokeApiKeyMutation = graphql(
  `
  mutation ConsoleRevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) { ...ApiKeyFields }
  }
`,
  [ApiKeyFields],
);
