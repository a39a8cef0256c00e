// The HTTP sink (AGENT_GATEWAY_AUDIT_SINK_URL): each checkpoint POSTed as the signed note itself
// (`text/plain; charset=utf-8`), with `Authorization: Bearer <AGENT_GATEWAY_AUDIT_SINK_TOKEN>` when
// one is set. A 2xx answer means the endpoint holds it; anything else, a timeout or a refused
// connection is a failure the runner retries with backoff. Redirects are not followed.
//
// The connection goes through the egress policy like every upstream's: the composition hands
// over an undici dispatcher built on the egress connector (runtime/gateway-runtime.ts), which
// this plane cannot import.
import { type Dispatcher, request } from 'undici';
import type { StoredCheckpoint } from '../../storage/tables/audit-checkpoints.js';
import type { CheckpointSink } from './sinks.js';

/** An answer body is read this far at most (an endpoint's error page), then dropped. */
const MAX_ANSWER_BYTES = 4096;

export interface HttpSinkOptions {
  readonly url: string;
  readonly token?: string | undefined;
  readonly dispatcher: Dispatcher;
  /** Per delivery (default 10 s). */
  readonly timeoutMs?: number;
}

export class HttpCheckpointSink implements CheckpointSink {
  readonly name: string;
  readonly kind = 'http';
  readonly #options: HttpSinkOptions;

  constructor(options: HttpSinkOptions) {
    this.#options = options;
    const url = new URL(options.url);
    // The name shows in logs and the progress table: never a password in the URL.
    url.username = '';
    url.password = '';
    this.name = `http:${url.href}`;
  }

  async deliver(checkpoint: StoredCheckpoint): Promise<void> {
    const timeout = this.#options.timeoutMs ?? 10_000;
    const answer = await request(this.#options.url, {
      method: 'POST',
      dispatcher: this.#options.dispatcher,
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        ...(this.#options.token ? { authorization: `Bearer ${this.#options.token}` } : {}),
      },
      body: checkpoint.note,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      signal: AbortSignal.timeout(timeout),
    });
    let read = 0;
    let text = '';
    for await (const chunk of answer.body) {
      if (read < MAX_ANSWER_BYTES) text += (chunk as Buffer).toString('utf8');
      read += (chunk as Buffer).length;
    }
    if (answer.statusCode < 200 || answer.statusCode > 299) {
      throw new Error(`${this.name} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
    }
  }
}
