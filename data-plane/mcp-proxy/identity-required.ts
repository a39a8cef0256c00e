// The refusal of a caller without proven agent identity where the tenant requires it: a session
// is not opened for it (proxy.ts), a tools/call on a session and any stateless request is refused
// (stateless.ts).
import { formatErrorMessage } from '../../shared/errors/index.js';
import type { Block } from '../governance/exchange.js';

export function identityRequired(): Block {
  return {
    code: 'AGENT_IDENTITY_REQUIRED',
    message: formatErrorMessage('AGENT_IDENTITY_REQUIRED', {
      missing:
        'the tenant requires agent identity: use an access token obtained with private_key_jwt or the agent-identity authorization code',
    }),
  };
}
