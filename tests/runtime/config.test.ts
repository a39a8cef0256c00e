// The settings of tool-definition learning: how long a registration waits for the upstream's
// tools/list and how often every server is refreshed. Defaults as documented; a value that is not
// a whole number in range stops the start with CONFIG_INVALID naming the setting.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { GatewayError } from '../../shared/errors/index.js';

function configError(env: NodeJS.ProcessEnv): GatewayError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the settings');
}

describe('tool refresh settings', () => {
  it('default to a 2 s wait and a 5 min period', () => {
    expect(loadConfig({})).toMatchObject({
      toolsListWaitMs: 2_000,
      toolsRefreshIntervalMs: 300_000,
    });
  });

  it('take whole numbers in range', () => {
    const config = loadConfig({
      AGENT_GATEWAY_TOOLS_LIST_WAIT_MS: '0',
      AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS: '60000',
    });
    expect(config).toMatchObject({ toolsListWaitMs: 0, toolsRefreshIntervalMs: 60_000 });
  });

  it.each([
    ['AGENT_GATEWAY_TOOLS_LIST_WAIT_MS', 'soon'],
    ['AGENT_GATEWAY_TOOLS_LIST_WAIT_MS', '60001'],
    ['AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS', '999'],
    ['AGENT_GATEWAY_TOOLS_REFRESH_INTERVAL_MS', '-5'],
  ])('refuses %s=%s with CONFIG_INVALID naming it', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`${name}=${value}`);
  });
});

describe('egress settings', () => {
  it('default to the built-in policy (empty lists)', () => {
    expect(loadConfig({}).egress).toEqual({
      allow: { ranges: [], names: [] },
      deny: { ranges: [], names: [] },
    });
  });

  it('take comma-separated CIDRs, addresses and host names', () => {
    const { egress } = loadConfig({
      AGENT_GATEWAY_EGRESS_ALLOW: '169.254.169.254, mcp.internal',
      AGENT_GATEWAY_EGRESS_DENY: '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,127.0.0.0/8,::1,*.corp',
    });
    expect(egress.allow.ranges).toHaveLength(1);
    expect(egress.allow.names).toEqual([{ name: 'mcp.internal', wildcard: false }]);
    expect(egress.deny.ranges).toHaveLength(5);
    expect(egress.deny.names).toEqual([{ name: '.corp', wildcard: true }]);
  });

  it.each([
    ['AGENT_GATEWAY_EGRESS_ALLOW', '10.0.0.0/8,10.0.0.1/8', '10.0.0.1/8'],
    ['AGENT_GATEWAY_EGRESS_DENY', 'https://evil.example', 'https://evil.example'],
    ['AGENT_GATEWAY_EGRESS_DENY', '::1/200', '::1/200'],
  ])(
    'refuses an invalid entry of %s with CONFIG_INVALID naming the variable and the entry',
    (name, value, entry) => {
      const error = configError({ [name]: value });
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(name);
      expect(error.message).toContain(JSON.stringify(entry));
    },
  );
});
