// The button beside a secret shown once (a new API key, a spawned agent's private key): one look
// for "copy it now", its label turning to what was copied.
import { Button, CopyButton } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';

export function CopySecretButton({
  value,
  label,
  copiedLabel,
}: {
  value: string;
  label: string;
  copiedLabel: string;
}) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button
          variant="light"
          color={copied ? 'teal' : undefined}
          leftSection={copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
          onClick={copy}
        >
          {copied ? copiedLabel : label}
        </Button>
      )}
    </CopyButton>
  );
}
