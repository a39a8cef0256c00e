// The gateway's `requestState` envelope (MCP 2026-07-28, multi-round-trip requests): what the
// gateway hands a client in an InputRequiredResult and takes back on the client's retry. The
// revision says a server MUST protect the integrity of a requestState that influences
// authorization and MUST reject one that fails verification; the client is an attacker here, so
// nothing in the retry is trusted but what this envelope authenticates.
//
// Written `ags1.<payload>.<mac>`, both base64url: the payload is JSON (RequestState), the MAC is
// HMAC-SHA256 over `ags1.<payload>` with the key derived from the master key for this purpose
// (shared/crypto/derived-key.ts), so every process of a split deployment verifies what another
// minted. The envelope binds the state to the call it was minted for: tenant, agent, server and
// the call digest (tool and arguments); the caller compares them with the retry's. It carries
// either the approval that holds the call, or the upstream's own requestState of a call the
// gateway already decided (the upstream sees its own value back and nothing else).
//
// Pure: no I/O; the clock is a parameter.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isRecord } from '../json/is-record.js';

const PREFIX = 'ags1.';
/** The longest envelope opened: an upstream's state plus the gateway's fields, well within an
 *  MCP message; anything longer is refused before it is decoded. */
export const MAX_REQUEST_STATE_CHARS = 256 * 1024;

interface Bound {
  readonly tenantId: string;
  readonly agentId: string;
  readonly serverId: string;
  /** computeCallDigest of the call (data-plane/governance/call-digest.ts). */
  readonly callDigest: string;
  /** Epoch milliseconds after which the envelope is refused. */
  readonly expiresAt: number;
}

/** A held call: the approval that holds it. */
export interface ApprovalState extends Bound {
  readonly kind: 'approval';
  readonly approvalId: string;
}

/** A call the gateway allowed whose upstream asked for input: the upstream's own state, if any. */
export interface RoundState extends Bound {
  readonly kind: 'round';
  /** What the gateway decided for the first round (later matching rounds are not decided again). */
  readonly decision: 'allow';
  readonly upstreamState?: string;
}

export type RequestState = ApprovalState | RoundState;

export type OpenedRequestState =
  | { readonly ok: true; readonly state: RequestState }
  | { readonly ok: false; readonly problem: 'malformed' | 'forged' }
  /** Authentic but past its expiry: what it was for still tells the caller why it is refused. */
  | { readonly ok: false; readonly problem: 'expired'; readonly state: RequestState };

/** True for text shaped like the gateway's envelope (whether it verifies is another matter). */
export function isGatewayRequestState(text: unknown): text is string {
  return typeof text === 'string' && text.startsWith(PREFIX);
}

/** The envelope of `state`, authenticated with `key`. */
export function sealRequestState(key: Uint8Array, state: RequestState): string {
  const signed = PREFIX + Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
  return `${signed}.${mac(key, signed)}`;
}

/** The state inside `text` when `key` authenticates it and it has not expired at `now` (an
 *  expired one is returned beside the refusal). */
export function openRequestState(
  key: Uint8Array,
  text: string,
  now = Date.now(),
): OpenedRequestState {
  if (!isGatewayRequestState(text) || text.length > MAX_REQUEST_STATE_CHARS) {
    return { ok: false, problem: 'malformed' };
  }
  const dot = text.lastIndexOf('.');
  if (dot <= PREFIX.length) return { ok: false, problem: 'malformed' };
  const signed = text.slice(0, dot);
  const given = Buffer.from(text.slice(dot + 1), 'base64url');
  const expected = Buffer.from(mac(key, signed), 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, problem: 'forged' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(signed.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  const state = asRequestState(parsed);
  if (state === undefined) return { ok: false, problem: 'malformed' };
  if (state.expiresAt <= now) return { ok: false, problem: 'expired', state };
  return { ok: true, state };
}

function mac(key: Uint8Array, signed: string): string {
  return createHmac('sha256', key).update(signed, 'utf8').digest('base64url');
}

/** The parsed payload when it has every field its kind needs (a MAC'd payload always does, but
 *  a key shared with an older release may have signed another shape). */
function asRequestState(value: unknown): RequestState | undefined {
  if (!isRecord(value)) return undefined;
  const { kind, tenantId, agentId, serverId, callDigest, expiresAt } = value;
  const bound =
    typeof tenantId === 'string' &&
    typeof agentId === 'string' &&
    typeof serverId === 'string' &&
    typeof callDigest === 'string' &&
    typeof expiresAt === 'number' &&
    Number.isFinite(expiresAt);
  if (!bound) return undefined;
  if (kind === 'approval' && typeof value.approvalId === 'string') {
    return value as unknown as ApprovalState;
  }
  if (
    kind === 'round' &&
    value.decision === 'allow' &&
    (value.upstreamState === undefined || typeof value.upstreamState === 'string')
  ) {
    return value as unknown as RoundState;
  }
  return undefined;
}
