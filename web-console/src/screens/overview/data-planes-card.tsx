// The remote data planes: which configuration version each has applied against the tenant's
// current one, and when each was last seen. Listing them needs tenants:admin.
import { Badge, Card, Table, Text, Title } from '@mantine/core';
import { useQuery } from 'urql';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { useSession } from '../../session/session.tsx';
import { DataPlanesQuery } from './queries.ts';

function when(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—';
}

function RemoteDataPlanes() {
  const [{ data, error }] = useQuery({ query: DataPlanesQuery });
  if (error) return <ErrorAlert error={error} />;
  if (!data) return null;
  const current = data.me.tenant.configVersion;
  const planes = data.dataPlanes.filter((plane) => !plane.revokedAt);
  if (planes.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        No remote data planes are registered: this gateway serves every request itself (
        <code>agent-gateway start</code>). See docs/config-push.md to add some.
      </Text>
    );
  }
  return (
    <Table aria-label="Data planes">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>Applied configuration</Table.Th>
          <Table.Th>Last seen</Table.Th>
          <Table.Th>Version</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {planes.map((plane) => (
          <Table.Tr key={plane.id}>
            <Table.Td>{plane.name}</Table.Td>
            <Table.Td>
              {plane.appliedSnapshotVersion ?? '—'}{' '}
              {plane.appliedSnapshotVersion === current ? (
                <Badge color="teal" variant="light" size="sm">
                  current
                </Badge>
              ) : (
                <Badge color="yellow" variant="light" size="sm">
                  behind {current}
                </Badge>
              )}
            </Table.Td>
            <Table.Td>{when(plane.lastSeenAt)}</Table.Td>
            <Table.Td>{plane.softwareVersion ?? '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function DataPlanesCard() {
  const { hasScope } = useSession();
  return (
    <Card withBorder padding="md">
      <Title order={3} size="h5" mb="sm">
        Data planes
      </Title>
      {hasScope('tenants:admin') ? (
        <RemoteDataPlanes />
      ) : (
        <Text size="sm" c="dimmed">
          Listing registered data planes needs the <code>tenants:admin</code> scope.
        </Text>
      )}
    </Card>
  );
}
