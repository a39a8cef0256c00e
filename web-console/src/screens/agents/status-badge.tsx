// An agent's status as a badge: active green, killed red (colours of the theme, both schemes).
import { Badge } from '@mantine/core';

export function AgentStatusBadge({ status }: { status: string }) {
  return (
    <Badge color={status === 'killed' ? 'red' : 'teal'} variant="light">
      {status}
    </Badge>
  );
}
