// A short ranked table (top denied tools, top reason codes): label, count, and a bar of the share.
import { Progress, Table, Text } from '@mantine/core';

export interface RankedItem {
  readonly key: string;
  readonly label: string;
  readonly detail?: string;
  readonly count: number;
}

export function RankedList({
  items,
  empty,
  caption,
}: {
  items: readonly RankedItem[];
  empty: string;
  caption: string;
}) {
  if (items.length === 0) {
    return (
      <Text c="dimmed" size="sm">
        {empty}
      </Text>
    );
  }
  const top = Math.max(...items.map((item) => item.count));
  return (
    <Table verticalSpacing={4} aria-label={caption}>
      <Table.Tbody>
        {items.map((item) => (
          <Table.Tr key={item.key}>
            <Table.Td>
              <Text size="sm" ff="monospace">
                {item.label}
              </Text>
              {item.detail ? (
                <Text size="xs" c="dimmed">
                  {item.detail}
                </Text>
              ) : null}
            </Table.Td>
            <Table.Td w="35%">
              <Progress value={(item.count / top) * 100} color="red" aria-hidden />
            </Table.Td>
            <Table.Td w={60} ta="right">
              <Text size="sm" fw={600}>
                {item.count}
              </Text>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
