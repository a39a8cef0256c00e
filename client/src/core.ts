// The gateway client: inspect a call, wait for a held call's approval, and governTool — the one
// wrapper every adapter uses. The gateway decides; the agent runs its own tool: inspections send
// `forward: false` unless the caller asks otherwise, so an allow is a decision, not a forward.
// Once the gateway says AGENT_REVOKED the client is latched: every later call throws AgentRevoked
// without a request, so a killed agent's run stops however its framework retries.
import { AccessTokens } from './access-tokens.js';
import { waitForApproval as pollApproval, type WaitForApprovalOptions } from './approvals.js';
import { type GatewayClientConfig, type ResolvedConfig, resolveConfig } from './config.js';
import { AgentRevoked, GatewayDenied, GatewayRequestError } from './errors.js';
import { createHttp, type HttpSend } from './http.js';
import { type AgentIdentityMaterial, IdentityCache } from './identity.js';
import { type AgentSigner, createAgentProof, createAgentSigner } from './proof.js';

export const INSPECT_PATH = '/api/v1/mcp/gateway/inspect';

export interface ToolCall {
  readonly toolName: string;
  readonly arguments: Record<string, unknown>;
  /** Default: config.servers[toolName], then config.serverId. */
  readonly serverId?: string;
  /** Default: one id per client instance. */
  readonly executionId?: string;
  /** Resubmission of a held call. */
  readonly approvalId?: string;
  /** Default false: the gateway decides, the agent runs the tool. */
  readonly forward?: boolean;
  readonly signal?: AbortSignal;
}

export type InspectDecision = 'allow' | 'deny' | 'require_approval';

export interface InspectOutcome {
  readonly decision: InspectDecision;
  readonly reasonCode: string | null;
  readonly inspectionId: string;
  readonly auditId?: string;
  readonly ruleId?: string;
  readonly policy?: string;
  readonly approvalId?: string;
  readonly simulated?: boolean;
  /** The simulation's mock result, or the upstream's result of a forwarded call. */
  readonly result?: unknown;
  /** The gateway's answer as sent. */
  readonly raw: Record<string, unknown>;
}

export interface GovernedToolDefinition {
  readonly name: string;
  readonly serverId?: string;
}

export type GovernedExecute<A, R> = (
  args: A,
  context: { signal?: AbortSignal | undefined; inspection: InspectOutcome },
) => Promise<R> | R;

export type GovernedTool<A, R> = (args: A, options?: { signal?: AbortSignal }) => Promise<R>;

export class GatewayClient {
  readonly config: Readonly<GatewayClientConfig>;
  readonly #resolved: ResolvedConfig;
  readonly #send: HttpSend;
  readonly #identity: IdentityCache;
  readonly #tokens: AccessTokens;
  readonly #executionId = globalThis.crypto.randomUUID();
  #signer: Promise<AgentSigner> | undefined;
  #rpcId = 0;
  #revoked: AgentRevoked | undefined;

  constructor(config: GatewayClientConfig) {
    this.#resolved = resolveConfig(config);
    this.config = Object.freeze({ ...config });
    this.#send = createHttp(this.#resolved);
    this.#identity = new IdentityCache(this.#resolved, this.#send);
    this.#tokens = new AccessTokens(this.#resolved, this.#identity);
  }

  /** True once the gateway answered AGENT_REVOKED: every later call throws without a request. */
  get revoked(): boolean {
    return this.#revoked !== undefined;
  }

  /** The agent's public identity material (cached, refreshed before its credential expires). */
  async identity(options: { signal?: AbortSignal } = {}): Promise<AgentIdentityMaterial> {
    this.#throwIfRevoked();
    return this.#identity.get(options.signal);
  }

  /**
   * An access token of the agent's OAuth client for one resource (`mcp://{serverId}`), from the
   * token endpoint with `clientSecret`; cached until shortly before it expires. A killed agent
   * throws AgentRevoked.
   */
  async accessToken(resource: string, options: { signal?: AbortSignal } = {}): Promise<string> {
    this.#throwIfRevoked();
    try {
      return await this.#tokens.get(resource, options.signal);
    } catch (error) {
      if (error instanceof AgentRevoked) this.#revoked = error;
      throw error;
    }
  }

  /** One inspection. Deny and hold are outcomes, not errors. */
  async inspect(call: ToolCall): Promise<InspectOutcome> {
    this.#throwIfRevoked();
    const config = this.#resolved;
    const serverId = call.serverId ?? config.servers[call.toolName] ?? config.serverId;
    if (serverId === undefined) {
      throw new GatewayRequestError(
        0,
        null,
        `no server for tool ${call.toolName}: set serverId or servers.${call.toolName}`,
      );
    }
    const body: Record<string, unknown> = {
      agent_id: config.agentId,
      execution_id: call.executionId ?? this.#executionId,
      server_id: serverId,
      tool_name: call.toolName,
      execution_mode: config.executionMode,
      policy: config.policy,
      forward: call.forward ?? false,
      request: {
        jsonrpc: '2.0',
        id: ++this.#rpcId,
        method: 'tools/call',
        params: { name: call.toolName, arguments: call.arguments },
      },
    };
    if (call.approvalId !== undefined) body.approval_id = call.approvalId;
    const proofHeaders = await this.#identityFields(body, call.signal);
    const text = JSON.stringify(body);
    const answer = await this.#send({
      method: 'POST',
      path: INSPECT_PATH,
      body: text,
      headers: proofHeaders,
      signal: call.signal,
    });
    return this.#outcome(answer.status, answer.body);
  }

  /** Resolves 'approved' once an operator approves; throws for any other end. */
  async waitForApproval(approvalId: string, options?: WaitForApprovalOptions): Promise<'approved'> {
    this.#throwIfRevoked();
    return pollApproval(this.#resolved, this.#send, approvalId, options);
  }

  /**
   * Wraps a tool: inspect → allow: run it (simulation: return the gateway's mock) → deny:
   * GatewayDenied → held: wait for the approval, resubmit with its id, run once allowed.
   */
  governTool<A extends Record<string, unknown>, R>(
    definition: GovernedToolDefinition,
    execute: GovernedExecute<A, R>,
  ): GovernedTool<A, R> {
    const { name, serverId } = definition;
    return async (args, options = {}) => {
      const { signal } = options;
      const base = serverId === undefined ? {} : { serverId };
      let outcome = await this.inspect({ ...base, toolName: name, arguments: args, signal });
      if (outcome.decision === 'require_approval' && outcome.approvalId !== undefined) {
        await this.waitForApproval(outcome.approvalId, { signal });
        outcome = await this.inspect({
          ...base,
          toolName: name,
          arguments: args,
          approvalId: outcome.approvalId,
          signal,
        });
      }
      if (outcome.decision !== 'allow') throw denialOf(outcome);
      if (outcome.simulated) return outcome.result as R;
      signal?.throwIfAborted();
      return execute(args, { signal, inspection: outcome });
    };
  }

  /** With a private key: the credential (and a delegate's chain) in the body, and the proof header. */
  async #identityFields(
    body: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<((text: string | undefined) => Promise<Record<string, string>>) | undefined> {
    const config = this.#resolved;
    if (config.privateKeyJwk === undefined) return undefined;
    if (config.delegation !== undefined) {
      body.agent_credential = config.delegation.rootCredential;
      body.delegation_chain = config.delegation.chain;
    } else {
      const material = await this.#identity.get(signal);
      if (material.credential !== null) body.agent_credential = material.credential;
    }
    this.#signer ??= createAgentSigner(config.privateKeyJwk);
    const signer = await this.#signer;
    const htu = `${config.publicUrl}${INSPECT_PATH}`;
    return async (text) => ({
      'agent-proof': await createAgentProof(signer, { htm: 'POST', htu, body: text ?? '' }),
    });
  }

  #outcome(status: number, raw: Record<string, unknown>): InspectOutcome {
    const decision = raw.decision;
    const reasonCode = typeof raw.reasonCode === 'string' ? raw.reasonCode : null;
    if (reasonCode === 'AGENT_REVOKED') {
      this.#revoked = new AgentRevoked(this.#resolved.agentId, stringOr(raw.auditId));
      this.#resolved.logger.warn?.({ agentId: this.#resolved.agentId }, 'agent revoked');
      throw this.#revoked;
    }
    if (decision !== 'allow' && decision !== 'deny' && decision !== 'require_human_approval') {
      throw GatewayRequestError.fromBody(status, raw);
    }
    const approval = raw.approval as { id?: unknown } | undefined;
    const response = raw.response as { result?: unknown } | undefined;
    const outcome: {
      -readonly [K in keyof InspectOutcome]: InspectOutcome[K];
    } = {
      decision: decision === 'require_human_approval' ? 'require_approval' : decision,
      reasonCode,
      inspectionId: String(raw.inspectionId),
      raw,
    };
    copy(outcome, 'auditId', raw.auditId);
    copy(outcome, 'ruleId', raw.ruleId);
    copy(outcome, 'policy', raw.policy);
    copy(outcome, 'approvalId', approval?.id);
    if (raw.simulated === true) outcome.simulated = true;
    if (decision === 'allow' && response !== undefined && typeof response === 'object') {
      outcome.result = response.result;
    }
    this.#resolved.logger.debug?.(
      { decision: outcome.decision, reasonCode, inspectionId: outcome.inspectionId },
      'inspected',
    );
    return outcome;
  }

  #throwIfRevoked(): void {
    // A fresh error per call (its own stack), carrying the kill's audit id.
    if (this.#revoked !== undefined) {
      throw new AgentRevoked(this.#revoked.agentId, this.#revoked.auditId);
    }
  }
}

export function createGatewayClient(config: GatewayClientConfig): GatewayClient {
  return new GatewayClient(config);
}

/** The GatewayDenied of a deny (or a hold that could not be released) outcome. */
export function denialOf(outcome: InspectOutcome): GatewayDenied {
  return new GatewayDenied({
    reasonCode: outcome.reasonCode ?? 'APPROVAL_PENDING',
    ruleId: outcome.ruleId,
    policy: outcome.policy,
    auditId: outcome.auditId,
    inspectionId: outcome.inspectionId,
    message: stringOr(outcome.raw.message),
  });
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function copy<K extends 'auditId' | 'ruleId' | 'policy' | 'approvalId'>(
  target: { [P in K]?: string },
  key: K,
  value: unknown,
): void {
  if (typeof value === 'string') target[key] = value;
}
