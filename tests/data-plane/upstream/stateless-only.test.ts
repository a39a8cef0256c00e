// The inspect forwarder in front of a server of the stateless era only (2026-07-28): the server
// refuses its initialize as such a server does, and the forwarder then sends each request alone
// with that era's `_meta` and headers: tools/list learns its tools (what a registration does) and
// a forwarded tools/call gets the server's answer. A session-era server still gets a session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamClient, type UpstreamClient } from '../../../data-plane/upstream/index.js';
import {
  type StatelessTestUpstream,
  startStatelessUpstream,
} from '../../support/stateless-upstream.js';

describe('the inspect forwarder in front of a stateless-only server', () => {
  let upstream: StatelessTestUpstream;
  let client: UpstreamClient;

  beforeAll(async () => {
    upstream = await startStatelessUpstream();
    client = createUpstreamClient();
  });
  afterAll(async () => {
    await client?.close();
    await upstream?.close();
  });

  const target = () => ({ serverKey: 'tenant-a/modern', url: upstream.url });

  it('lists its tools and forwards a call, each request alone with the era’s _meta and headers', async () => {
    const tools = await client.listTools(target());
    expect(tools.map((tool) => tool.name)).toEqual(['secret_tool', 'echo']);
    const forwarded = await client.forward({
      target: target(),
      sessionKey: 'tenant-a/agent-1/modern',
      message: {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'héllo' } },
      },
    });
    expect(forwarded.response).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'héllo' }] },
    });
    expect(forwarded.sessionId).toBeUndefined();
    const sent = upstream.log.at(-1)!;
    expect(sent.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(sent.headers['mcp-method']).toBe('tools/call');
    expect(sent.headers['mcp-name']).toBe('echo');
    expect(sent.headers['mcp-session-id']).toBeUndefined();
    expect(sent.body.params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'agent-gateway', version: '0.1.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    });
    // Refused once per key, then known: no initialize for the second call of the same key.
    const initializes = upstream.log.filter((entry) => entry.method === 'initialize').length;
    await client.forward({
      target: target(),
      sessionKey: 'tenant-a/agent-1/modern',
      message: {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'echo', arguments: {} },
      },
    });
    expect(upstream.log.filter((entry) => entry.method === 'initialize').length).toBe(initializes);
  });
});
