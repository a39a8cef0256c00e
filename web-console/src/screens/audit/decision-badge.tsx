// A decision as a badge that is never cut: Mantine's badge hides what overflows, and in a table
// column squeezed by its neighbours that was most of the label ("APPRO…"), so the badge claims
// its full width and the column gives way elsewhere. The stored value is the badge's title.
import { Badge } from '@mantine/core';
import { decisionColor, decisionLabel } from './entry-fields.ts';

export function DecisionBadge({ decision }: { decision: string }) {
  return (
    <Badge
      variant="light"
      color={decisionColor(decision)}
      title={decision}
      style={{ minWidth: 'max-content' }}
    >
      {decisionLabel(decision)}
    </Badge>
  );
}
