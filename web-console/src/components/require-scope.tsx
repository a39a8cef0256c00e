// Shows its children only to a key with the scope (or any one of several); otherwise says which
// scope is missing and what it would allow, so an operator knows what key to ask for.
import { Alert, Code } from '@mantine/core';
import { IconLock } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { useSession } from '../session/session.tsx';

export function RequireScope({
  scope,
  to,
  children,
}: {
  /** One scope, or several of which any one is enough. */
  scope: string | readonly string[];
  /** What the scope allows here, completing "Your API key lacks <scope>, needed to …". */
  to: string;
  children: ReactNode;
}) {
  const { hasScope } = useSession();
  const scopes: readonly string[] = typeof scope === 'string' ? [scope] : scope;
  if (scopes.some(hasScope)) return <>{children}</>;
  return (
    <Alert color="gray" icon={<IconLock size={18} />} title="Not allowed with this key">
      Your API key lacks the{' '}
      {scopes.map((name, i) => (
        <span key={name}>
          {i > 0 ? ' or ' : null}
          <Code>{name}</Code>
        </span>
      ))}{' '}
      scope, needed to {to}. Sign in with a key that has it (a key with <Code>keys:manage</Code>{' '}
      creates one on the API keys screen).
    </Alert>
  );
}
