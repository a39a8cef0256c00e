// A value an operator copies elsewhere (a public key, a client id, a secret): shown (shortened
// when asked) with a copy button named after what it copies, so it is reachable by keyboard and
// by screen readers.
import { ActionIcon, Code, CopyButton, Group, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';

/** `z6MkhaXg…Eta2doK`: enough of both ends to tell keys apart. */
export function shorten(value: string, keep = 8): string {
  return value.length <= keep * 2 + 1 ? value : `${value.slice(0, keep)}…${value.slice(-keep)}`;
}

export function CopyValue({
  value,
  label,
  short = false,
}: {
  value: string;
  /** What is copied, e.g. "public key": the button is named "Copy public key". */
  label: string;
  short?: boolean;
}) {
  return (
    <Group gap={4} wrap="nowrap">
      <Code title={short ? value : undefined} style={{ wordBreak: 'break-all' }}>
        {short ? shorten(value) : value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : `Copy ${label}`}>
            <ActionIcon
              variant="subtle"
              color={copied ? 'teal' : 'gray'}
              aria-label={`Copy ${label}`}
              onClick={copy}
            >
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}
