// The process settings (runtime/config.ts SETTINGS): defaults as documented, and a value a
// setting's parser refuses stops the start with CONFIG_INVALID naming the setting. Tool-definition
// learning (how long a registration waits for tools/list, how often every server is refreshed),
// egress and the GraphQL introspection switch in detail.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../runtime/config.js';
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

describe('every setting', () => {
  it('has its default when unset or empty', () => {
    const defaults = {
      host: '127.0.0.1',
      port: 8080,
      dataDir: resolve('./data'),
      databaseUrl: undefined,
      databaseSchema: 'public',
      logLevel: 'info',
      shutdownTimeoutMs: 10_000,
      accessLog: false,
      publicUrl: undefined,
      masterKey: undefined,
      killAckWaitMs: 250,
      mcpSessionConcurrency: 32,
      mcpAgentConcurrency: 128,
      mcpMaxMessageBytes: 4 * 1024 * 1024,
      streamHeartbeatMs: 15_000,
      startupSnapshotWaitMs: 5_000,
      graphqlIntrospection: true,
      requireMcpOAuth: false,
    };
    expect(loadConfig({})).toMatchObject(defaults);
    const empty = Object.fromEntries(Object.values(SETTINGS).map((row) => [row.name, '']));
    expect(loadConfig(empty)).toMatchObject(defaults);
  });

  it.each([
    ['AGENT_GATEWAY_PORT', '65536', 'AGENT_GATEWAY_PORT=65536'],
    ['AGENT_GATEWAY_LOG_LEVEL', 'loud', 'AGENT_GATEWAY_LOG_LEVEL=loud'],
    ['AGENT_GATEWAY_DB_SCHEMA', 'Public', 'AGENT_GATEWAY_DB_SCHEMA=Public'],
    ['DATABASE_URL', 'mysql://u:secret@db/x', 'DATABASE_URL=(hidden)'],
    ['AGENT_GATEWAY_PUBLIC_URL', 'https://gw.example/?a=1', 'AGENT_GATEWAY_PUBLIC_URL=https://'],
    ['AGENT_GATEWAY_ACCESS_LOG', 'yes', 'AGENT_GATEWAY_ACCESS_LOG=yes'],
    ['NEXUS_REQUIRE_MCP_OAUTH', 'on', 'NEXUS_REQUIRE_MCP_OAUTH=on'],
  ])('refuses %s=%s with CONFIG_INVALID naming it', (name, value, named) => {
    const error = configError({ [name]: value });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(named);
  });

  it('never echoes a refused DATABASE_URL (it may carry a password)', () => {
    expect(configError({ DATABASE_URL: 'mysql://u:secret@db/x' }).message).not.toContain('secret');
  });

  it('refuses a malformed master key with MASTER_KEY_INVALID naming the variable', () => {
    const error = configError({ AGENT_GATEWAY_MASTER_KEY: 'short' });
    expect(error.code).toBe('MASTER_KEY_INVALID');
    expect(error.message).toContain('AGENT_GATEWAY_MASTER_KEY');
  });
});

describe('the GraphQL introspection switch', () => {
  it('is on unless false, 0, off or no (any case, spaces ignored), as it always was', () => {
    const introspection = (value: string) =>
      loadConfig({ AGENT_GATEWAY_GRAPHQL_INTROSPECTION: value }).graphqlIntrospection;
    for (const on of ['true', '1', 'yes', 'anything']) expect(introspection(on), on).toBe(true);
    for (const off of ['false', '0', 'off', 'no', ' OFF ', 'False']) {
      expect(introspection(off), off).toBe(false);
    }
  });
});

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
