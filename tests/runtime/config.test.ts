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
