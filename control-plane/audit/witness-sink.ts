// The witness sink (AGENT_GATEWAY_AUDIT_WITNESS_URL, _KEY): each checkpoint submitted to a C2SP
// tlog-witness (https://c2sp.org/tlog-witness) with `add-checkpoint`, the consistency proof from
// the size the witness last cosigned for that tenant's origin. The witness answers its
// cosignature (cosignature/v1), which is verified with the configured witness key and stored with
// the checkpoint (served after the gateway's signature). A 409 says which size the witness has:
// the sink sends the proof from there. A checkpoint smaller than what the witness has already
// cosigned (a sink catching up after its progress was lost) cannot be cosigned and is passed.
//
// The connection goes through the egress policy: the composition hands over the dispatcher.
import type { Logger } from 'pino';
import { type Dispatcher, request } from 'undici';
import { cosignedAt, parseNote, type WitnessKey } from '../../shared/tlog/index.js';
import type { StoredCheckpoint } from '../../storage/tables/audit-checkpoints.js';
import type { CheckpointSink } from './sinks.js';

const MAX_ANSWER_BYTES = 64 * 1024;
/** A 409 names the witness's size; more than this many in a row is a witness that keeps moving. */
const MAX_CONFLICTS = 3;

export interface WitnessSinkOptions {
  /** The witness's submission prefix: `add-checkpoint` is POSTed under it. */
  readonly url: string;
  readonly key: WitnessKey;
  readonly dispatcher: Dispatcher;
  /** The consistency proof (base64 hashes) of a tenant's tree from `first` to `second`. */
  readonly consistency: (
    tenantId: string,
    first: number,
    second: number,
  ) => Promise<readonly string[]>;
  /** Stores verified cosignature lines with their checkpoint. */
  readonly store: (checkpointId: string, lines: readonly string[]) => Promise<void>;
  readonly logger: Logger;
  readonly timeoutMs?: number;
}

export class WitnessCheckpointSink implements CheckpointSink {
  readonly name: string;
  readonly kind = 'witness';
  readonly witnessKey: WitnessKey;
  readonly #options: WitnessSinkOptions;
  readonly #endpoint: string;
  /** The size the witness last cosigned, per tenant (learnt from its answers). */
  readonly #sizes = new Map<string, number>();

  constructor(options: WitnessSinkOptions) {
    this.#options = options;
    this.witnessKey = options.key;
    const base = options.url.endsWith('/') ? options.url.slice(0, -1) : options.url;
    this.#endpoint = `${base}/add-checkpoint`;
    this.name = `witness:${options.key.name}`;
  }

  async deliver(checkpoint: StoredCheckpoint): Promise<void> {
    let old = this.#sizes.get(checkpoint.tenantId) ?? 0;
    for (let conflicts = 0; conflicts <= MAX_CONFLICTS; conflicts++) {
      if (old > checkpoint.treeSize) {
        this.#options.logger.info(
          {
            witness: this.#options.key.name,
            tenantId: checkpoint.tenantId,
            witnessSize: old,
            treeSize: checkpoint.treeSize,
          },
          'audit checkpoint older than what the witness cosigned: passed',
        );
        return;
      }
      const proof =
        old === 0 || old === checkpoint.treeSize
          ? []
          : await this.#options.consistency(checkpoint.tenantId, old, checkpoint.treeSize);
      const body = `old ${old}\n${proof.map((hash) => `${hash}\n`).join('')}\n${checkpoint.note}`;
      const answer = await this.#post(body);
      if (answer.status === 409 && /^\d+\n?$/.test(answer.text)) {
        old = Number(answer.text.trim());
        this.#sizes.set(checkpoint.tenantId, old);
        continue;
      }
      if (answer.status !== 200) {
        throw new Error(
          `witness ${this.#endpoint} answered ${answer.status}: ${answer.text.slice(0, 200)}`,
        );
      }
      const lines = answer.text.split('\n').filter((line) => line.startsWith('\u2014 '));
      const parsed = parseNote(`${checkpoint.note}${lines.map((line) => `${line}\n`).join('')}`);
      if (typeof parsed === 'string') throw new Error(`witness answer unreadable: ${parsed}`);
      if (cosignedAt(parsed.text, parsed.signatures, this.#options.key) === null) {
        throw new Error(
          `witness ${this.#options.key.name} answered no valid cosignature of its key`,
        );
      }
      // Only the configured witness's lines are kept.
      const own = lines.filter((line) => line.startsWith(`\u2014 ${this.#options.key.name} `));
      await this.#options.store(
        checkpoint.id,
        own.map((line) => `${line}\n`),
      );
      this.#sizes.set(checkpoint.tenantId, checkpoint.treeSize);
      return;
    }
    throw new Error(`witness ${this.#endpoint} kept answering 409 (its size moves on)`);
  }

  async #post(body: string): Promise<{ status: number; text: string }> {
    const timeout = this.#options.timeoutMs ?? 10_000;
    const answer = await request(this.#endpoint, {
      method: 'POST',
      dispatcher: this.#options.dispatcher,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      signal: AbortSignal.timeout(timeout),
    });
    let text = '';
    let read = 0;
    for await (const chunk of answer.body) {
      read += (chunk as Buffer).length;
      if (read > MAX_ANSWER_BYTES)
        throw new Error(`witness answer larger than ${MAX_ANSWER_BYTES} bytes`);
      text += (chunk as Buffer).toString('utf8');
    }
    return { status: answer.statusCode, text };
  }
}
