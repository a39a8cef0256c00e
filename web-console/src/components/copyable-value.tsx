// A value to copy in full (a hash, an id), with a copy button named after its label. Shown whole
// and wrapped, or cut to one line with an ellipsis (`truncate`) where the whole is in its title.
import { ActionIcon, Code, CopyButton, Group, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';

export function CopyableValue({
  label,
  value,
  truncate = false,
}: {
  label: string;
  value: string;
  truncate?: boolean;
}) {
  return (
    <Group gap={4} wrap="nowrap" align={truncate ? 'center' : 'flex-start'}>
      <Code
        aria-label={label}
        title={truncate ? value : undefined}
        style={
          truncate
            ? { overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }
            : { wordBreak: 'break-all' }
        }
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy'}>
            <ActionIcon variant="subtle" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}
