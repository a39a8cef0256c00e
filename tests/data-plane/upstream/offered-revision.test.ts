// Why the inspect forwarder offers INSPECT_OFFERED_PROTOCOL_VERSION (2025-06-18) rather than the
// newest revision (shared/mcp/protocol.ts): from 2025-11-25 on a server may close a request's SSE
// stream before the response and expect the client to resume it (SSE polling), and the forwarder
// does not resume. The upstream is the conformance reference server (the official SDK with an
// event store), whose test_reconnection tool closes its own stream when the client's revision
// allows it. When the forwarder learns to resume, the second test fails: raise the offer then.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createUpstreamClient,
  type UpstreamClient,
  UpstreamError,
} from '../../../data-plane/upstream/index.js';
import {
  INSPECT_OFFERED_PROTOCOL_VERSION,
  LATEST_SESSION_PROTOCOL_VERSION,
} from '../../../shared/mcp/protocol.js';
import {
  type ReferenceServer,
  startReferenceServer,
} from '../../support/conformance-reference-server.js';

const RECONNECTION_CALL = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'tools/call',
  params: { name: 'test_reconnection', arguments: {} },
};

describe('the revision the inspect forwarder offers', () => {
  let server: ReferenceServer;
  let client: UpstreamClient | undefined;
  const forward = (protocolVersion: string) => {
    client = createUpstreamClient({ protocolVersion });
    return client.forward({
      target: { serverKey: 'tenant-a/reference', url: server.url },
      sessionKey: 'tenant-a/agent-1/reference',
      message: RECONNECTION_CALL,
    });
  };

  beforeAll(async () => {
    server = await startReferenceServer();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    client = undefined;
  });
  afterEach(async () => {
    await client?.close();
  });

  it('gets the answer of a tool that would close its stream mid-call, on the stream left open', async () => {
    const forwarded = await forward(INSPECT_OFFERED_PROTOCOL_VERSION);
    expect(forwarded.response).toMatchObject({
      id: 1,
      result: { content: [{ type: 'text', text: 'Reconnection tool finished' }] },
    });
  });

  it(`would fail that call offering ${LATEST_SESSION_PROTOCOL_VERSION}: the server polls and the forwarder does not resume`, async () => {
    expect(INSPECT_OFFERED_PROTOCOL_VERSION).not.toBe(LATEST_SESSION_PROTOCOL_VERSION);
    const failure = await forward(LATEST_SESSION_PROTOCOL_VERSION).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).code).toBe('MCP_UPSTREAM_ERROR');
    expect((failure as UpstreamError).detail).toMatch(/SSE stream ended before the response/);
  });
});
