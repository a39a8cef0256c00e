// An agent's configuration (system prompt, persona, tools, audiences, execution mode,
// credentials) needs agents:manage field by field: without it the API answers the field null with
// AUTH_INSUFFICIENT_SCOPE (docs/security.md), and the screen says so instead of showing it unset.
import { Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { useSession } from '../../session/session.tsx';

export function HiddenConfiguration() {
  return (
    <Text size="sm" c="dimmed">
      hidden: needs agents:manage
    </Text>
  );
}

/**
 * For the fields that are also null when unset (persona tone and language, execution mode): the
 * session's scopes tell hidden from unset.
 */
export function Configuration({ children }: { children: ReactNode }) {
  const { hasScope } = useSession();
  return hasScope('agents:manage') ? children : <HiddenConfiguration />;
}
