// Which denies the overview shows as client errors: refusals of a malformed request, read from
// the registry's statuses, never a policy or security refusal.
import { expect, it } from 'vitest';
import {
  CLIENT_ERROR_CODES,
  CLIENT_ERROR_STATUSES,
} from '../../../shared/decisions/decision-counts.js';
import { ERROR_CODES } from '../../../shared/errors/index.js';

it('counts malformed, oversized and unreadable requests as client errors', () => {
  for (const code of ['MCP_MALFORMED_RPC', 'REQUEST_INVALID', 'MCP_META_TOO_LARGE'] as const) {
    expect(CLIENT_ERROR_CODES).toContain(code);
  }
  for (const code of CLIENT_ERROR_CODES) {
    expect(CLIENT_ERROR_STATUSES.has(ERROR_CODES[code].status ?? 0)).toBe(true);
  }
});

it('keeps policy and security refusals as denies', () => {
  for (const code of [
    'MCP_TOKEN_PASSTHROUGH',
    'MCP_METHOD_BLOCKED',
    'NPL_POLICY_BLOCK',
    'AGENT_UNKNOWN',
    'AUTH_INVALID_API_KEY',
    'RATE_LIMITED',
  ] as const) {
    expect(CLIENT_ERROR_CODES).not.toContain(code);
  }
});
