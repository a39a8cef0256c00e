// The configuration stream's pieces without processes: the SSE writer against the data plane's
// parser, and the hub's resume rules (serialize once, resume by version and epoch).
import { describe, expect, it } from 'vitest';
import { ConfigStreamHub } from '../../control-plane/stream/hub.js';
import { formatSseComment, formatSseEvent } from '../../control-plane/stream/sse.js';
import { computeBackoffMs } from '../../data-plane/remote/client.js';
import type { SseEvent } from '../../data-plane/upstream/sse-parser.js';
import type { ConfigSnapshot } from '../../shared/snapshot/index.js';
import { parseSse, recordingStreamClient } from '../support/config-stream.js';

const snapshot = (version: number): ConfigSnapshot => ({
  version,
  builtAt: new Date(0).toISOString(),
  tenants: [],
  tokenSigningKeys: [],
});

/** The events of `text` arriving in chunks of `chunk` characters. */
function parse(text: string, chunk = 7): SseEvent[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += chunk) chunks.push(text.slice(i, i + chunk));
  return parseSse(chunks);
}

describe('SSE writer', () => {
  it('round-trips events, multi-line data and comments through the parser in any chunking', () => {
    const text =
      formatSseComment('hello\nworld') +
      formatSseEvent('snapshot', '{"a":1}', 'ep:1') +
      formatSseEvent('heartbeat', 'line one\nline two\r\nline three');
    for (const chunk of [1, 3, 64]) {
      expect(parse(text, chunk)).toEqual([
        { event: 'snapshot', data: '{"a":1}', id: 'ep:1' },
        { event: 'heartbeat', data: 'line one\nline two\nline three', id: 'ep:1' },
      ]);
    }
  });

  it('refuses a line break in an event name or id', () => {
    expect(() => formatSseEvent('a\nb', 'x')).toThrow();
    expect(() => formatSseEvent('a', 'x', 'i\rd')).toThrow();
  });
});

describe('config stream hub', () => {
  it('sends the same serialized snapshot to every client and resumes by version', () => {
    const hub = new ConfigStreamHub();
    try {
      const a = recordingStreamClient();
      const b = recordingStreamClient();
      hub.connect(a, 0, '');
      hub.apply(snapshot(1));
      hub.connect(b, 0, '');
      expect(a.texts).toHaveLength(1);
      expect(b.texts[0]).toBe(a.texts[0]);
      expect(parse(a.texts[0] as string)[0]?.id).toBe(`${hub.epoch}:1`);
      // Up to date in this epoch: nothing to send.
      const c = recordingStreamClient();
      hub.connect(c, 1, hub.epoch);
      expect(c.texts).toEqual([]);
      expect(hub.apply(snapshot(1)).applied).toBe(false);
      hub.apply(snapshot(2));
      expect([a, b, c].map((x) => x.texts.length)).toEqual([2, 2, 1]);
    } finally {
      hub.close();
    }
  });

  it('asks for a build above a version a client holds from an earlier control-plane process', () => {
    const behind: number[] = [];
    const hub = new ConfigStreamHub({ onBehind: (version) => behind.push(version) });
    try {
      const early = recordingStreamClient();
      // Connected before the first build: the first snapshot decides.
      hub.connect(early, 7, 'feedbeef');
      hub.apply(snapshot(1));
      expect(early.texts).toEqual([]);
      expect(behind).toEqual([7]);
      const late = recordingStreamClient();
      hub.connect(late, 5, 'feedbeef');
      expect(behind).toEqual([7, 5]);
      hub.apply(snapshot(8));
      expect(parse(early.texts[0] as string)[0]?.id).toBe(`${hub.epoch}:8`);
      expect(late.texts).toHaveLength(1);
      hub.close();
      expect(early.ended && late.ended).toBe(true);
    } finally {
      hub.close();
    }
  });

  it('drops a client that does not read', () => {
    const hub = new ConfigStreamHub({ maxBacklogBytes: 10 });
    try {
      const slow = { ...recordingStreamClient(), backlog: () => 11 };
      hub.connect(slow, 0, '');
      hub.apply(snapshot(1));
      expect(slow.ended).toBe(true);
      expect(hub.clients).toBe(0);
    } finally {
      hub.close();
    }
  });
});

describe('reconnect backoff', () => {
  it('grows exponentially with jitter and is capped at 5 s', () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const ceiling = Math.min(5000, 100 * 2 ** attempt);
      const delay = computeBackoffMs(attempt);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
