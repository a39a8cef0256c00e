// How an agent reaches the gateway: its identity credentials (status, expiry, revocation) and its
// OAuth clients (client id, audiences, revoked or not).
import { Badge, Code, Stack, Table, Text, Title } from '@mantine/core';
import type { ResultOf } from '../../graphql.ts';
import { HiddenConfiguration } from './hidden-configuration.tsx';
import type { AgentDetail, AgentDetailQuery } from './operations.ts';

type Clients = ResultOf<typeof AgentDetailQuery>['oauthClients']['edges'];

const CREDENTIAL_COLOURS: Record<string, string> = {
  VALID: 'teal',
  EXPIRED: 'gray',
  REVOKED: 'red',
};

function when(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

export function AgentCredentials({ agent }: { agent: AgentDetail }) {
  // Null without agents:manage (a field-level scope of the API).
  const credentials = agent.identityCredentials?.edges.map((edge) => edge.node) ?? null;
  return (
    <Stack gap="xs">
      <Title order={3}>Identity credentials</Title>
      {credentials === null ? (
        <HiddenConfiguration />
      ) : credentials.length === 0 ? (
        <Text size="sm" c="dimmed">
          None issued (an agent created without spawn has none until one is issued).
        </Text>
      ) : (
        <Table aria-label="Identity credentials">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Credential</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Issued</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Revoked</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {credentials.map((credential) => (
              <Table.Tr key={credential.id}>
                <Table.Td>
                  <Code>{credential.id}</Code>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light" color={CREDENTIAL_COLOURS[credential.status] ?? 'gray'}>
                    {credential.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{when(credential.issuedAt)}</Table.Td>
                <Table.Td>{when(credential.expiresAt)}</Table.Td>
                <Table.Td>
                  {when(credential.revokedAt)}
                  {credential.revokedReason ? ` (${credential.revokedReason})` : ''}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

export function AgentOAuthClients({ clients }: { clients: Clients }) {
  return (
    <Stack gap="xs">
      <Title order={3}>OAuth clients</Title>
      {clients.length === 0 ? (
        <Text size="sm" c="dimmed">
          None: the agent cannot obtain MCP tokens.
        </Text>
      ) : (
        <Table aria-label="OAuth clients">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Client id</Table.Th>
              <Table.Th>Audiences</Table.Th>
              <Table.Th>Authentication</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Revoked</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {clients.map(({ node: client }) => (
              <Table.Tr key={client.id}>
                <Table.Td>
                  <Code>{client.id}</Code>
                </Table.Td>
                <Table.Td>{client.resources.join(', ') || '—'}</Table.Td>
                <Table.Td>{client.tokenEndpointAuthMethod.toLowerCase()}</Table.Td>
                <Table.Td>{when(client.createdAt)}</Table.Td>
                <Table.Td>
                  {client.revokedAt ? (
                    <Badge color="red" variant="light">
                      revoked {when(client.revokedAt)}
                    </Badge>
                  ) : (
                    'no'
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
