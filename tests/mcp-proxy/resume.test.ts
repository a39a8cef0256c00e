// Resumability of the proxy's own streams: a held tools/call's event stream carries event ids; the
// client's connection breaks while the call waits for its approval; the call goes on (a
// disconnection is not a cancellation); the client GETs with Last-Event-ID and receives what it
// missed and the result once an operator approved. An unknown Last-Event-ID is 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../control-plane/graphql/support.js';
import { type ProxyFixture, startHoldingProxyFixture } from './support.js';
import {
  apiKeyHeaders,
  expectRefusal,
  mcpFetch,
  openRawSession,
  parseSse,
  toolsCall,
} from './transport-support.js';

/** Reads an SSE body until `until` holds for the events so far, then drops the connection. */
async function readEvents(
  response: Response,
  until: (events: { id?: string; data: unknown }[]) => boolean,
  abort: () => void,
): Promise<{ id?: string; data: unknown }[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const events: { id?: string; data: unknown }[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    text += decoder.decode(value, { stream: true });
    let end = text.indexOf('\n\n');
    while (end !== -1) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      end = text.indexOf('\n\n');
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data !== undefined) events.push({ id, data: JSON.parse(data) });
    }
    if (until(events)) {
      abort();
      return events;
    }
  }
}

describe('MCP proxy: a broken stream resumes with Last-Event-ID', () => {
  let fixture: ProxyFixture;
  let admin: string;
  beforeAll(async () => {
    ({ fixture, admin } = await startHoldingProxyFixture('pglite'));
  });
  afterAll(() => fixture.close());

  it('delivers the held call’s result on the resumed stream, forwarded once', async () => {
    const { gateway, proxyUrl, upstream } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const { headers } = await openRawSession(proxyUrl, apiKeyHeaders(gateway.tenant.key, agentId));
    const connection = new AbortController();
    const first = await fetch(proxyUrl, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(toolsCall('echo', { text: 'needs-human' }, 'held-1')),
      signal: connection.signal,
    });
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The first event tells which approval holds the call; then the connection breaks.
    const before = await readEvents(
      first,
      (events) => events.length >= 1,
      () => connection.abort(),
    );
    const notice = before[0] as { id: string; data: { params: { data: { approvalId: string } } } };
    expect(notice.id).toMatch(/:0$/);
    const approvalId = notice.data.params.data.approvalId;

    const approved = await graphql<{ approveApproval: { status: string } }>(
      gateway.url,
      admin,
      'mutation($id: ID!) { approveApproval(id: $id) { status } }',
      { id: approvalId },
    );
    // USED: the waiting call woke and consumed it before the mutation read the approval back.
    expect(['APPROVED', 'USED']).toContain(approved.data?.approveApproval.status);

    const resumed = await fetch(proxyUrl, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': notice.id },
    });
    expect(resumed.status).toBe(200);
    const after = parseSse(await resumed.text()) as { id?: string; result?: unknown }[];
    const result = after.find((message) => message.id === 'held-1');
    expect(result).toMatchObject({ result: { structuredContent: { text: 'needs-human' } } });
    expect(upstream.calls.get('echo')).toBe(1);
  });

  it('refuses a Last-Event-ID that names no stream of the session (400)', async () => {
    const { gateway, proxyUrl } = fixture;
    const agentId = await gateway.addAgent(gateway.tenant.id);
    const { headers } = await openRawSession(proxyUrl, apiKeyHeaders(gateway.tenant.key, agentId));
    const answer = await mcpFetch(proxyUrl, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': 'nope:3' },
    });
    expectRefusal(answer, 400, 'REQUEST_INVALID');
  });
});
