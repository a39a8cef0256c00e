// One HTTP exchange with the gateway: JSON in and out, the API key, a per-request timeout, and
// retries with exponential backoff and jitter on 429 and 503 only (Retry-After honoured, capped).
// Every other status is returned to the caller, which knows what it means on its route. A
// caller's abort is never retried and surfaces as the signal's reason (an AbortError).
import type { ResolvedConfig } from './config.js';
import { GatewayUnavailable } from './errors.js';

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query, starting with `/`. */
  readonly path: string;
  /** The exact body text; sent as application/json. */
  readonly body?: string;
  /** Headers for one attempt; called again per retry (an Agent-Proof is single-use). */
  readonly headers?: (
    body: string | undefined,
  ) => Promise<Record<string, string>> | Record<string, string>;
  readonly signal?: AbortSignal | undefined;
  /** Added to the configured timeout (a long-poll's own wait). */
  readonly extraTimeoutMs?: number;
}

export interface HttpAnswer {
  readonly status: number;
  /** The parsed JSON body, or {} when there was none or it was not JSON. */
  readonly body: Record<string, unknown>;
}

const RETRIED = new Set([429, 503]);
const BASE_DELAY_MS = 200;
const MAX_DELAY_MS = 10_000;

export type HttpSend = (request: HttpRequest) => Promise<HttpAnswer>;

export function createHttp(config: ResolvedConfig): HttpSend {
  return async function send(request) {
    const attempts = config.retries + 1;
    let last: Response | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const response = await attemptOnce(config, request, attempt);
      if (!RETRIED.has(response.status) || attempt === attempts) {
        if (RETRIED.has(response.status)) {
          await response.body?.cancel();
          throw new GatewayUnavailable(response.status, attempt);
        }
        return { status: response.status, body: await readBody(response, request, attempt) };
      }
      last = response;
      const delay = retryDelay(response.headers.get('retry-after'), attempt);
      await last.body?.cancel();
      config.logger.debug?.(
        { status: response.status, attempt, delayMs: delay, path: request.path },
        'gateway busy, retrying',
      );
      await sleep(delay, request.signal);
    }
    throw new GatewayUnavailable(last?.status ?? 0, attempts);
  };
}

async function attemptOnce(
  config: ResolvedConfig,
  request: HttpRequest,
  attempt: number,
): Promise<Response> {
  const timeout = AbortSignal.timeout(config.timeoutMs + (request.extraTimeoutMs ?? 0));
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.apiKey}`,
    accept: 'application/json',
    ...(request.headers ? await request.headers(request.body) : {}),
  };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await config.fetch(`${config.baseUrl}${request.path}`, {
      method: request.method,
      headers,
      body: request.body,
      signal,
    });
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    throw new GatewayUnavailable(0, attempt, { cause: error });
  }
}

/** The answer's JSON; a body cut short (timeout, reset) is the gateway not answering. */
async function readBody(
  response: Response,
  request: HttpRequest,
  attempt: number,
): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    throw new GatewayUnavailable(0, attempt, { cause: error });
  }
  if (text.length === 0) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Retry-After (seconds or an HTTP date) when present, else exponential backoff with full jitter. */
export function retryDelay(retryAfter: string | null, attempt: number): number {
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_DELAY_MS);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.min(Math.max(date - Date.now(), 0), MAX_DELAY_MS);
  }
  const ceiling = Math.min(BASE_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS);
  return Math.random() * ceiling;
}

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
