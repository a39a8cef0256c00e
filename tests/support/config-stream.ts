// Pieces of the configuration stream for tests that run the hub, the guard or the parser without
// processes: a made-up kill delta, a stream client that keeps what it is sent, and the SSE events
// of written text as the data plane's parser reads them.
import type { StreamClient } from '../../control-plane/stream/hub.js';
import { type SseEvent, SseParser } from '../../data-plane/upstream/sse-parser.js';
import { type AgentKillDelta, DATA_PLANE_ACK_PATH } from '../../shared/config-stream/protocol.js';

/** The kill delta number `seq` of agent `agent-<seq>` in tenant `tenant`, with no status lists. */
export const killDelta = (seq: number): AgentKillDelta => ({
  seq,
  killId: `kill-${seq}`,
  tenantId: 'tenant',
  agentId: `agent-${seq}`,
  publicKey: `key-${seq}`,
  killedAt: new Date(0).toISOString(),
  statusLists: [],
});

/** A hub client that never backs up and keeps every text it is sent. */
export function recordingStreamClient(): StreamClient & { texts: string[]; ended: boolean } {
  const texts: string[] = [];
  return {
    texts,
    ended: false,
    send(text) {
      texts.push(text);
    },
    backlog: () => 0,
    end() {
      this.ended = true;
    },
  };
}

/** The events of an SSE stream arriving in these chunks. */
export function parseSse(chunks: readonly (Uint8Array | string)[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((event) => {
    events.push(event);
    return undefined;
  });
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return events;
}

/** POSTs `body` to the control plane's ack endpoint at `baseUrl` as the data plane `credential`. */
export function postAck(baseUrl: string, credential: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}${DATA_PLANE_ACK_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
