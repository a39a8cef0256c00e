// A stateless-era (2026-07-28) tools/call across its rounds: the revision has no session and no
// waiting on an open stream, so a call that needs something first answers at once with an
// InputRequiredResult, and the client retries the same call carrying the result's requestState.
// Two things need a round trip through the gateway:
// - a call held for a human: the answer is an InputRequiredResult with one URL-mode elicitation,
//   the approval's console page (`<public URL>/console/approvals/<id>`), and a requestState that
//   names the approval. A client that has not declared `elicitation.url` gets the revision's
//   missing-capability error instead (-32021, HTTP 400), naming the capability and carrying the
//   approval, its page and the requestState, so it can show the page and retry once decided;
// - an upstream's own InputRequiredResult (elicitation, sampling, roots) to a call the gateway
//   allowed: its requestState goes to the client wrapped in the gateway's envelope (call digest,
//   decision, expiry), and comes back unwrapped, so the upstream sees its own value. A later
//   round with the same tool and arguments is not decided again nor counted again; one that
//   changes them is a new call.
// The envelope (shared/mcp/request-state.ts) is authenticated with a key derived from the master
// key; nothing else of a retry is trusted: an envelope that does not verify, has expired, or was
// issued to another agent, server or call is refused (MCP_REQUEST_STATE_INVALID) and audited. A
// requestState that is not the gateway's envelope at all is the upstream's business: the call is
// governed as a new one and the value forwarded as sent.
import { formatErrorMessage } from '../../shared/errors/index.js';
import { type ApprovalId, asApprovalId, type ServerId, type TenantId } from '../../shared/ids.js';
import { isRecord } from '../../shared/json/is-record.js';
import {
  GATEWAY_APPROVAL_INPUT_KEY,
  GATEWAY_META_KEYS,
  INPUT_REQUIRED_RESULT_TYPE,
  JSONRPC_ERROR_CODES,
  MCP_METHODS,
} from '../../shared/mcp/protocol.js';
import {
  isGatewayRequestState,
  openRequestState,
  type RequestState,
  sealRequestState,
} from '../../shared/mcp/request-state.js';
import { computeCallDigest } from '../governance/call-digest.js';
import type { Block } from '../governance/exchange.js';
import type { McpProxyDependencies } from './dependencies.js';
import { rpcError } from './rpc-errors.js';
import type { JsonRpcRequestMessage, JsonRpcResponseMessage } from './transport/messages.js';

/** How long the envelope of an upstream's requestState is accepted back. */
export const ROUND_STATE_TTL_MS = 10 * 60_000;

/** What a retry's requestState makes of it. */
export type Inbound =
  /** No requestState, or the upstream's own (not the gateway's envelope): a call to govern. */
  | { readonly kind: 'call'; readonly message: JsonRpcRequestMessage }
  /** Refused before governance (audited as a deny). */
  | { readonly kind: 'refused'; readonly block: Block }
  /** The retry of a held call: its approval decides it. `message` is the call without the
   *  gateway's round (what the upstream sees once it is approved). */
  | {
      readonly kind: 'approval';
      readonly approvalId: ApprovalId;
      readonly expired: boolean;
      readonly message: JsonRpcRequestMessage;
    }
  /** A later round of a call the gateway allowed: same tool and arguments, forwarded as decided. */
  | { readonly kind: 'round'; readonly message: JsonRpcRequestMessage };

interface HeldApproval {
  readonly id: string;
  readonly status: string;
  readonly expiresAt: string;
}

export class CallRounds {
  readonly #deps: McpProxyDependencies;
  readonly #tenantId: TenantId;
  readonly #agentId: string;
  readonly #serverId: string;
  readonly #message: JsonRpcRequestMessage;
  readonly #clientCapabilities: Readonly<Record<string, unknown>>;
  #digest: string | undefined;

  constructor(
    deps: McpProxyDependencies,
    call: {
      readonly tenantId: TenantId;
      readonly agentId: string;
      readonly serverId: string;
      readonly message: JsonRpcRequestMessage;
      readonly clientCapabilities: Readonly<Record<string, unknown>>;
    },
  ) {
    this.#deps = deps;
    this.#tenantId = call.tenantId;
    this.#agentId = call.agentId;
    this.#serverId = call.serverId;
    this.#message = call.message;
    this.#clientCapabilities = call.clientCapabilities;
  }

  /** The digest of this call (tenant, agent, server, tool, arguments), as a hold computes it;
   *  computed on first need (a plain call that is neither held nor asked anything needs none). */
  get digest(): string {
    if (this.#digest === undefined) {
      const params = this.#message.params ?? {};
      this.#digest = computeCallDigest({
        tenantId: this.#tenantId,
        agentId: this.#agentId as never,
        serverId: this.#serverId as ServerId,
        toolName: typeof params.name === 'string' ? params.name : '',
        arguments: isRecord(params.arguments) ? params.arguments : {},
      });
    }
    return this.#digest;
  }

  /** What the request's requestState makes of it. */
  inbound(): Inbound {
    const params = this.#message.params ?? {};
    const text = params.requestState;
    if (!isGatewayRequestState(text)) return { kind: 'call', message: this.#message };
    const key = this.#deps.requestStateKey.current;
    if (key === undefined) {
      return refused('this process has no master key to verify it (AGENT_GATEWAY_MASTER_KEY)');
    }
    const opened = openRequestState(key, text);
    if (!opened.ok && opened.problem !== 'expired') {
      return refused(opened.problem === 'forged' ? 'its MAC does not verify' : 'it is malformed');
    }
    const state = opened.state;
    if (
      state.tenantId !== this.#tenantId ||
      state.agentId !== this.#agentId ||
      state.serverId !== this.#serverId
    ) {
      return refused('it was issued to another agent or server');
    }
    if (state.kind === 'approval') {
      if (state.callDigest !== this.digest) {
        return refused('it was issued for another tool or other arguments');
      }
      return {
        kind: 'approval',
        approvalId: asApprovalId(state.approvalId),
        expired: !opened.ok,
        message: this.#withRequestState(undefined, true),
      };
    }
    if (!opened.ok) return refused('it has expired; call the tool again');
    const message = this.#withRequestState(state.upstreamState, false);
    // A round that changes the tool or its arguments is a new call, decided and counted again.
    return state.callDigest === this.digest
      ? { kind: 'round', message }
      : { kind: 'call', message };
  }

  /**
   * The answer to a call held by `approval`, given at once: an InputRequiredResult to a client
   * that declared URL-mode elicitation, else -32021 naming it (HTTP 400 either way is the
   * revision's: 200 for a result, 400 for this error).
   */
  held(
    approval: HeldApproval,
    reasonCode: string,
    reason: string | undefined,
  ): { readonly response: JsonRpcResponseMessage; readonly status: number } {
    const url = approvalPageUrl(this.#deps.publicUrl.get(), approval.id);
    const what = `held for approval ${approval.id}: ${reason ?? 'a policy requires a human'}`;
    const requestState = this.#seal({
      kind: 'approval',
      ...this.#bound(Date.parse(approval.expiresAt)),
      approvalId: approval.id,
    });
    if (!declaresUrlElicitation(this.#clientCapabilities)) {
      return {
        status: 400,
        response: rpcError(
          this.#message.id,
          JSONRPC_ERROR_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY,
          reasonCode,
          `${what}. Answering it needs URL-mode elicitation (elicitation.url), which this client did not declare: open ${url}, and call the tool again once it is decided`,
          {
            requiredCapabilities: { elicitation: { url: {} } },
            approvalId: approval.id,
            url,
            expiresAt: approval.expiresAt,
            // Echoed as params.requestState, the retry gets the decision itself (a rejection's
            // deny); a plain retry resumes the approval while it is pending or approved.
            ...(requestState === undefined ? {} : { requestState }),
          },
        ),
      };
    }
    return {
      status: 200,
      response: {
        jsonrpc: '2.0',
        id: this.#message.id,
        result: {
          resultType: INPUT_REQUIRED_RESULT_TYPE,
          inputRequests: {
            [GATEWAY_APPROVAL_INPUT_KEY]: {
              method: MCP_METHODS.ELICITATION_CREATE,
              params: {
                mode: 'url',
                message: `${what}. Open the page to see the call; an operator approves or rejects it there. Then retry.`,
                url,
              },
            },
          },
          ...(requestState === undefined ? {} : { requestState }),
          _meta: {
            [GATEWAY_META_KEYS.REASON_CODE]: reasonCode,
            [GATEWAY_META_KEYS.APPROVAL_ID]: approval.id,
            [GATEWAY_META_KEYS.EXPIRES_AT]: approval.expiresAt,
          },
        },
      },
    };
  }

  /** The upstream's answer to the allowed call: its requestState wrapped in the envelope. */
  forwarded(response: JsonRpcResponseMessage): JsonRpcResponseMessage {
    const result = response.result;
    if (!isRecord(result) || result.resultType !== INPUT_REQUIRED_RESULT_TYPE) return response;
    const upstreamState = typeof result.requestState === 'string' ? result.requestState : undefined;
    const requestState = this.#seal({
      kind: 'round',
      ...this.#bound(Date.now() + ROUND_STATE_TTL_MS),
      decision: 'allow',
      ...(upstreamState === undefined ? {} : { upstreamState }),
    });
    // Without a key the upstream's value passes as it is (its later rounds are decided again).
    if (requestState === undefined) return response;
    return { ...response, result: { ...result, requestState } };
  }

  #bound(expiresAt: number) {
    return {
      tenantId: this.#tenantId,
      agentId: this.#agentId,
      serverId: this.#serverId,
      callDigest: this.digest,
      expiresAt,
    };
  }

  #seal(state: RequestState): string | undefined {
    const key = this.#deps.requestStateKey.current;
    return key === undefined ? undefined : sealRequestState(key, state);
  }

  /**
   * The request as the upstream sees it: the gateway's envelope replaced by the upstream's own
   * state (or none); the gateway's own input answer dropped with it when it was the approval's.
   */
  #withRequestState(upstreamState: string | undefined, dropInputResponses: boolean) {
    const { requestState: _gateway, inputResponses, ...params } = this.#message.params ?? {};
    const next: Record<string, unknown> = { ...params };
    if (upstreamState !== undefined) next.requestState = upstreamState;
    if (inputResponses !== undefined && !dropInputResponses) next.inputResponses = inputResponses;
    return { ...this.#message, params: next } as JsonRpcRequestMessage;
  }
}

/** The console page of one approval, where an operator sees the call and decides it. */
export function approvalPageUrl(publicUrl: string, approvalId: string): string {
  return `${publicUrl}/console/approvals/${encodeURIComponent(approvalId)}`;
}

/** The approval's answer to a retry while it is still undecided. */
export function pendingReason(approvalId: string): string {
  return formatErrorMessage('APPROVAL_PENDING', { approvalId });
}

function refused(problem: string): Inbound {
  return {
    kind: 'refused',
    block: {
      code: 'MCP_REQUEST_STATE_INVALID',
      message: formatErrorMessage('MCP_REQUEST_STATE_INVALID', { problem }),
    },
  };
}

/** True when the client's capabilities include URL-mode elicitation (`elicitation.url`). */
export function declaresUrlElicitation(capabilities: Readonly<Record<string, unknown>>): boolean {
  const elicitation = capabilities.elicitation;
  return isRecord(elicitation) && isRecord(elicitation.url);
}
