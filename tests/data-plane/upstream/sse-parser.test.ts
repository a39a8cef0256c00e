// The SSE parser: the WHATWG event-stream rules the forwarding client relies on, independence from
// how the body is chunked (also inside multi-byte characters and CRLF pairs), and robustness on
// arbitrary bytes — end to end through the client too: any body is a response or an UpstreamError.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUpstreamClient,
  type SseEvent,
  SseParser,
  type UpstreamClient,
  UpstreamError,
} from '../../../data-plane/upstream/index.js';
import { splitAt } from '../../support/chunks.js';
import { parseSse } from '../../support/config-stream.js';
import { propertyRuns } from '../../support/property-runs.js';

const encoder = new TextEncoder();

describe('SseParser', () => {
  it('joins data lines, drops one leading space, defaults the type to message', () => {
    expect(parseSse(['data:a\ndata:  b\ndata\n\n'])).toEqual([
      { event: 'message', data: 'a\n b\n', id: '' },
    ]);
  });

  it('ignores comments and unknown fields; keeps the last event id', () => {
    expect(
      parseSse([': ping\nretry: 10\nfoo: bar\nid: 7\nevent: update\ndata: x\n\ndata: y\n\n']),
    ).toEqual([
      { event: 'update', data: 'x', id: '7' },
      { event: 'message', data: 'y', id: '7' },
    ]);
  });

  it('accepts CRLF, CR and LF line endings, also split across chunks', () => {
    expect(parseSse(['data: 1\r', '\n\r', '\ndata: 2\r\rdata: 3\n\n'])).toEqual([
      { event: 'message', data: '1', id: '' },
      { event: 'message', data: '2', id: '' },
      { event: 'message', data: '3', id: '' },
    ]);
  });

  it('takes a CR that ends the stream as the end of its line', () => {
    expect(parseSse(['data: a\r', '\r'])).toEqual([{ event: 'message', data: 'a', id: '' }]);
    expect(parseSse(['data: open\r'])).toEqual([]);
  });

  it('does not dispatch an event without data or an unterminated event', () => {
    expect(parseSse(['event: x\n\nid: 1\n\ndata: open'])).toEqual([]);
    expect(parseSse(['data: open\n'])).toEqual([]);
  });

  it('dispatches an empty data field as an empty event (priming events)', () => {
    expect(parseSse(['id: 1\ndata: \n\n'])).toEqual([{ event: 'message', data: '', id: '1' }]);
  });

  it('ignores an id containing NUL and strips a leading BOM', () => {
    expect(parseSse([new Uint8Array([0xef, 0xbb, 0xbf]), 'id: a\0b\ndata: z\n\n'])).toEqual([
      { event: 'message', data: 'z', id: '' },
    ]);
  });

  it('decodes UTF-8 split inside a character', () => {
    const bytes = encoder.encode('data: héllo 😀\n\n');
    const chunks = Array.from(bytes, (byte) => new Uint8Array([byte]));
    expect(parseSse(chunks)).toEqual([{ event: 'message', data: 'héllo 😀', id: '' }]);
  });

  it('stops when the handler returns true', () => {
    const seen: string[] = [];
    const parser = new SseParser((event) => {
      seen.push(event.data);
      return event.data === 'stop';
    });
    parser.push('data: a\n\ndata: stop\n\ndata: after\n\n');
    parser.push('data: later\n\n');
    parser.end();
    expect(seen).toEqual(['a', 'stop']);
    expect(parser.stopped).toBe(true);
  });
});

// A generated valid stream and the events it must yield.
const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !/[\r\n]/.test(s));
const eventArbitrary = fc.record({
  type: fc.option(
    lineText.filter((s) => s.length > 0 && !s.includes(':')),
    { nil: undefined },
  ),
  id: fc.option(
    lineText.filter((s) => !s.includes('\0')),
    { nil: undefined },
  ),
  data: fc.array(lineText, { minLength: 1, maxLength: 4 }),
  comment: fc.boolean(),
});
const streamArbitrary = fc.record({
  events: fc.array(eventArbitrary, { maxLength: 8 }),
  newline: fc.constantFrom('\n', '\r\n', '\r'),
});

type GeneratedStream = typeof streamArbitrary extends fc.Arbitrary<infer T> ? T : never;

function serialize(stream: GeneratedStream) {
  const nl = stream.newline;
  let text = '';
  let lastId = '';
  const expected: SseEvent[] = [];
  for (const event of stream.events) {
    if (event.comment) text += `: keep-alive${nl}`;
    if (event.type !== undefined) text += `event: ${event.type}${nl}`;
    if (event.id !== undefined) {
      text += `id: ${event.id}${nl}`;
      lastId = event.id;
    }
    for (const line of event.data) text += `data: ${line}${nl}`;
    text += nl;
    expected.push({ event: event.type ?? 'message', data: event.data.join('\n'), id: lastId });
  }
  return { bytes: encoder.encode(text), expected };
}

describe('SseParser properties', () => {
  it('yields the same events for every chunking of a valid stream', () => {
    fc.assert(
      fc.property(streamArbitrary, fc.array(fc.nat(), { maxLength: 20 }), (stream, cuts) => {
        const { bytes, expected } = serialize(stream);
        expect(parseSse([bytes])).toEqual(expected);
        expect(parseSse(splitAt(bytes, cuts))).toEqual(expected);
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('never throws on arbitrary bytes, however chunked', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (bytes, cuts) => {
          expect(() => parseSse(splitAt(bytes, cuts))).not.toThrow();
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });
});

describe('the client on arbitrary SSE bodies', () => {
  let body: Uint8Array[] = [];
  let url = '';
  let client: UpstreamClient;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (message.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'f' } },
          }),
        );
        return;
      }
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const part of body) res.write(part);
      res.end();
    });
  });

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    client = createUpstreamClient({ readTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers every body with a response or an UpstreamError, nothing else', async () => {
    const validTail = encoder.encode('\n\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 200 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (noise, withResponse, cuts) => {
          const bytes = withResponse ? Buffer.concat([noise, validTail]) : noise;
          body = splitAt(bytes, cuts);
          const outcome = await client
            .forward({
              target: { serverKey: 'fuzz', url },
              sessionKey: 'fuzz',
              message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
            })
            .then(
              (result) => result.response,
              (error: unknown) => error,
            );
          if (outcome instanceof Error) {
            expect(outcome).toBeInstanceOf(UpstreamError);
            expect((outcome as UpstreamError).code).toBe('MCP_UPSTREAM_ERROR');
          } else {
            expect(outcome).toMatchObject({ jsonrpc: '2.0' });
          }
        },
      ),
      { numRuns: propertyRuns(60) },
    );
  });
});
