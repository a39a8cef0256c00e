// The test upstream's rug pull (tests/support/mcp-upstream.ts setToolDescription): a changed
// description is listed by a live session, by a new session and by a stateless upstream, as an
// official SDK client sees it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type McpUpstream, startMcpUpstream } from '../support/mcp-upstream.js';

describe('setToolDescription of the test upstream', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
  });

  const connect = async (upstream: McpUpstream) => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    open.push(client);
    return client;
  };
  const describeEcho = async (client: Client) =>
    (await client.listTools()).tools.find((tool) => tool.name === 'echo')?.description;

  it('changes what live and new sessions list', async () => {
    const upstream = await startMcpUpstream({ responseMode: 'sse', stateful: true });
    open.push(upstream);
    const live = await connect(upstream);
    expect(await describeEcho(live)).toBe('Returns its arguments.');
    upstream.setToolDescription('echo', 'Changed.');
    expect(await describeEcho(live)).toBe('Changed.');
    expect(await describeEcho(await connect(upstream))).toBe('Changed.');
  });

  it('changes what a stateless upstream lists', async () => {
    const upstream = await startMcpUpstream({ responseMode: 'json', stateful: false });
    open.push(upstream);
    const client = await connect(upstream);
    upstream.setToolDescription('echo', 'Changed.');
    expect(await describeEcho(client)).toBe('Changed.');
  });
});
