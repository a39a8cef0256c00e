// The downstream half of the proxy: MCP's Streamable HTTP transport (revisions 2024-11-05 to
// 2025-11-25 with sessions, 2026-07-28 without) at /mcp/{serverId}, on Fastify. Written here rather than taken from the SDK's
// StreamableHTTPServerTransport because a proxy needs what that class hides: which downstream
// request each message belongs to (a held call's progress and an upstream's sampling request
// must travel on that call's own stream), the choice of JSON or SSE per answer, and one session
// per client bound to an agent and an upstream session.
//
// Per request, in order: Origin (403 MCP_ORIGIN_FORBIDDEN), who is calling (401 with
// WWW-Authenticate and the RFC 9728 metadata URL), the body (4 MiB; JSON; one message or a
// 2025-03-26 batch; `params` at most 64 levels deep, as on inspect), then the era: a POST of one
// message without a session that carries the stateless era's `_meta` or protocol version is
// checked as that revision requires (shared/mcp/stateless-request.ts: 400 with -32020, -32602 or
// -32022 and the request's id) and served by ../stateless.ts; every other request goes on with
// MCP-Protocol-Version (a session-era revision), the session (initialize opens one; every other
// POST, GET and DELETE needs the Mcp-Session-Id of a live session of the same agent and server),
// the concurrency limits, then the proxy (../proxy.ts). Transport failures are JSON-RPC error bodies with the registry's HTTP status and
// the reasonCode in `data`; gateway decisions are JSON-RPC errors on 200 (../rpc-errors.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toGatewayError } from '../../../http-edge/errors.js';
import { markRefusal } from '../../../shared/audit/index.js';
import {
  ERROR_CODES,
  type ErrorCode,
  formatErrorMessage,
  type GatewayError,
  gatewayError,
} from '../../../shared/errors/index.js';
import {
  eraOf,
  JSONRPC_ERROR_CODES,
  MCP_HEADERS,
  MCP_METHODS,
} from '../../../shared/mcp/protocol.js';
import {
  checkStatelessRequest,
  isRefusal,
  isStatelessTraffic,
} from '../../../shared/mcp/stateless-request.js';
import { MAX_DEPTH, MAX_NODES } from '../../governance/request.js';
import { withinJsonBounds } from '../../json-bounds.js';
import { refusedAgent } from '../../refusal-subjects.js';
import { authenticateCaller, type ProxyCaller, proxyChallenge } from '../auth.js';
import type { McpProxy } from '../proxy.js';
import type { ProxySession } from '../sessions.js';
import {
  type JsonRpcMessage,
  type JsonRpcRequestMessage,
  type JsonRpcResponseMessage,
  kindOf,
  type MessageKind,
} from './messages.js';
import { isOriginAllowed } from './origin.js';
import { CallStream, ServerStream, startEventStream } from './response-stream.js';

export const MCP_PROXY_PATH = '/mcp/:serverId';
// The ids a server can be registered under (control-plane/services/mcp-servers.ts): nothing else
// can be served, and the id goes into WWW-Authenticate, where a NUL, a non-Latin-1 character or a
// quote would break the header (a 500) or its quoted resource_metadata.
const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

interface ProxyRequest extends FastifyRequest {
  mcpCaller?: ProxyCaller;
}

export function registerStreamableHttp(app: FastifyInstance, proxy: McpProxy): void {
  const { limits, auth } = proxy.deps;
  const { authenticateApiKey } = app;
  const issuer = () => auth.issuer();

  // Inside this plugin every refusal is a JSON-RPC error body (what MCP clients read), with the
  // registry's status; 401s carry the resource metadata link.
  app.setErrorHandler(async (error, request, reply) => {
    const mapped = toGatewayError(error as Error, request);
    if (mapped.code === 'INTERNAL_ERROR') request.log.error({ err: error }, 'unexpected error');
    const serverId = (request.params as { serverId?: string } | undefined)?.serverId ?? '';
    return sendTransportError(reply, mapped, issuer(), serverId, statelessRequestId(request));
  });

  // Bodies are bounded as they are parsed, before anything can walk or serialize them: JSON.parse
  // builds a structure 100 000 levels deep without complaint, and the first JSON.stringify of it
  // (relaying an initialize upstream) threw a RangeError after the answer had been hijacked,
  // leaving the client hanging. The bound is inspect's: `params` nests at most MAX_DEPTH levels.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    parseJson(request, text as string, (error, body) => {
      if (error) return done(error, undefined);
      if (!withinMessageBounds(body)) {
        return done(
          invalid(
            `JSON nested deeper than ${MAX_DEPTH} levels below a message or more than ${MAX_NODES} values`,
          ),
          undefined,
        );
      }
      done(null, body);
    });
  });

  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !isOriginAllowed(origin, new URL(issuer()).origin)) {
      throw gatewayError('MCP_ORIGIN_FORBIDDEN', { origin: String(origin).slice(0, 200) });
    }
    const { serverId } = request.params as { serverId: string };
    if (!SERVER_ID.test(serverId)) {
      throw gatewayError('REQUEST_INVALID', { problem: 'the server id in the path is not valid' });
    }
    const agentIdHeader = request.headers['x-agent-id'];
    (request as ProxyRequest).mcpCaller = await authenticateCaller(
      auth,
      authenticateApiKey,
      {
        authorization: request.headers.authorization,
        agentIdHeader: typeof agentIdHeader === 'string' ? agentIdHeader : undefined,
      },
      serverId,
    );
  });

  app.post(
    MCP_PROXY_PATH,
    {
      bodyLimit: limits.maxMessageBytes,
      validatorCompiler: skipValidation,
      schema: routeSchema(
        'mcpProxyPost',
        'Send JSON-RPC messages to the MCP server through the proxy (Streamable HTTP).',
        {
          200: 'The JSON-RPC response (application/json), or an event stream (text/event-stream) of the messages for these requests ending with their responses.',
          202: 'Notifications or responses only: accepted.',
        },
      ),
    },
    (request, reply) => handlePost(proxy, request as ProxyRequest, reply),
  );
  app.get(
    MCP_PROXY_PATH,
    {
      validatorCompiler: skipValidation,
      schema: routeSchema('mcpProxyListen', "Open the session's server-to-client event stream.", {
        200: 'An event stream of what the upstream sends outside any request.',
      }),
    },
    (request, reply) => handleGet(proxy, request as ProxyRequest, reply),
  );
  app.delete(
    MCP_PROXY_PATH,
    {
      validatorCompiler: skipValidation,
      schema: routeSchema('mcpProxyEndSession', 'End the MCP session.', {
        200: 'The session ended.',
      }),
    },
    (request, reply) => {
      const session = findSession(proxy, request as ProxyRequest);
      proxy.deps.sessions.close(session);
      return reply.code(200).send();
    },
  );
}

const passThrough = (value: unknown) => ({ value });
/** The params schema documents the route; the onRequest hook has checked the server id. */
const skipValidation = () => passThrough;

const JSON_RPC_ERROR_BODY = {
  type: 'object',
  description: 'A JSON-RPC error (id null) whose data.reasonCode is the registry code.',
  additionalProperties: true,
} as const;

/** The OpenAPI description of a proxy route; bodies are JSON-RPC, documented by MCP. */
function routeSchema(operationId: string, summary: string, ok: Record<number, string>) {
  const response: Record<number, unknown> = {};
  for (const [status, description] of Object.entries(ok)) {
    response[Number(status)] = { description, type: 'null' };
  }
  for (const status of [400, 401, 403, 404, 429]) response[status] = JSON_RPC_ERROR_BODY;
  return {
    // Documents the contract (OpenAPI); the onRequest hook checks the server id itself, so
    // Fastify does not validate it again on every message.
    operationId,
    summary,
    description:
      'MCP Streamable HTTP (docs/mcp-proxy.md). Authorization: a gateway access token for <public URL>/mcp/{serverId}, or an agents:execute API key with X-Agent-Id.',
    params: {
      type: 'object',
      properties: { serverId: { type: 'string', maxLength: 128 } },
      required: ['serverId'],
    },
    response,
  };
}

async function handlePost(
  proxy: McpProxy,
  request: ProxyRequest,
  reply: FastifyReply,
): Promise<void> {
  const caller = request.mcpCaller!;
  const { serverId } = request.params as { serverId: string };
  const messages = Array.isArray(request.body) ? (request.body as unknown[]) : [request.body];
  if (messages.length === 0) throw invalid('an empty batch');
  const kinds = messages.map(kindOf);
  if (kinds.includes('invalid')) throw invalid('a message that is not JSON-RPC 2.0');
  if (!Array.isArray(request.body) && isStatelessTraffic(request.headers, request.body)) {
    proxy.deps.metrics.mcpProxyMessages.inc({ kind: kinds[0]!, era: 'stateless' });
    return handleStatelessPost(proxy, request, reply, kinds[0]!);
  }
  for (const kind of kinds) proxy.deps.metrics.mcpProxyMessages.inc({ kind, era: 'session' });
  const protocolVersion = checkedProtocolVersion(request);
  const initialize = messages.findIndex(
    (message, index) =>
      kinds[index] === 'request' &&
      (message as JsonRpcRequestMessage).method === MCP_METHODS.INITIALIZE,
  );
  if (initialize !== -1) {
    if (messages.length !== 1) throw invalid('initialize must be sent alone');
    reply.hijack();
    const stream = new CallStream(reply.raw, {});
    await proxy.initialize(caller, serverId, messages[0] as JsonRpcRequestMessage, stream);
    return;
  }
  const session = findSession(proxy, request);
  const version = protocolVersion ?? session.protocolVersion;
  const requests: JsonRpcRequestMessage[] = [];
  const others: Promise<void>[] = [];
  messages.forEach((message, index) => {
    if (kinds[index] === 'request') requests.push(message as JsonRpcRequestMessage);
    // Awaited before the 202: the client sends its next message only then, so the upstream
    // receives them in the client's order (notifications/initialized before the first request).
    else
      others.push(
        proxy.deliver(session, message as JsonRpcMessage, kinds[index] === 'notification'),
      );
  });
  await Promise.all(others);
  if (requests.length === 0) {
    return reply.code(202).send() as unknown as undefined;
  }
  admit(proxy, session, requests.length);
  reply.hijack();
  const stream = new CallStream(reply.raw, {}, requests.length, session.replay);
  stream.acceptsSse = acceptsEventStream(request);
  try {
    await Promise.all(
      requests.map((message) =>
        proxy
          .request(session, {
            caller,
            message,
            stream,
            headers: request.headers,
            protocolVersion: version,
          })
          .catch((error: unknown) => {
            request.log.error({ err: error }, 'mcp proxy: a request failed');
            stream.respond(internalFailure(message.id));
          }),
      ),
    );
  } finally {
    for (let i = 0; i < requests.length; i++) proxy.deps.sessions.release(session);
  }
}

/** A POST of the stateless era (2026-07-28): one message, no session. */
async function handleStatelessPost(
  proxy: McpProxy,
  request: ProxyRequest,
  reply: FastifyReply,
  kind: MessageKind,
): Promise<void> {
  if (kind === 'response') throw invalid('a response: a client of 2026-07-28 sends none');
  // The revision defines no client notification on Streamable HTTP (closing a stream cancels):
  // one is acknowledged as the transport requires and goes no further.
  if (kind === 'notification') return reply.code(202).send() as unknown as undefined;
  const message = request.body as JsonRpcRequestMessage;
  const checked = checkStatelessRequest(request.headers, message);
  if (isRefusal(checked)) {
    return reply.code(400).send({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: checked.rpcCode,
        message: `${checked.reasonCode}: ${formatErrorMessage(checked.reasonCode, {
          problem: checked.problem,
          version: checked.data?.requested ?? '',
        })}`,
        data: {
          ...checked.data,
          reasonCode: checked.reasonCode,
          hint: ERROR_CODES[checked.reasonCode].hint,
        },
      },
    }) as unknown as undefined;
  }
  const caller = request.mcpCaller!;
  const { sessions } = proxy.deps;
  // A listen stream is long-lived and bounded on its own (../stateless.ts), not as a call.
  const counted = message.method !== MCP_METHODS.SUBSCRIPTIONS_LISTEN;
  if (counted && !sessions.admitAgent(caller.agentId)) {
    throw gatewayError('MCP_CONCURRENCY_LIMIT', {
      scope: 'agent',
      limit: sessions.limits.perAgentInFlight,
    });
  }
  reply.hijack();
  const stream = new CallStream(reply.raw, {});
  stream.acceptsSse = acceptsEventStream(request);
  try {
    await proxy.stateless.serve({
      caller,
      serverId: (request.params as { serverId: string }).serverId,
      message,
      checked,
      headers: request.headers,
      stream,
    });
  } catch (error) {
    request.log.error({ err: error }, 'mcp proxy: a stateless request failed');
    stream.respond(internalFailure(message.id));
  } finally {
    if (counted) sessions.releaseAgent(caller.agentId);
  }
}

/** The answer to a request the proxy failed on (logged by the caller). */
function internalFailure(id: JsonRpcRequestMessage['id']): JsonRpcResponseMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: JSONRPC_ERROR_CODES.INTERNAL_ERROR,
      message: 'INTERNAL_ERROR: the proxy failed',
      data: { reasonCode: 'INTERNAL_ERROR' },
    },
  };
}

/** The id of a stateless-era request, which its transport errors carry; null otherwise. */
function statelessRequestId(request: FastifyRequest): string | number | null {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  if (typeof id !== 'string' && typeof id !== 'number') return null;
  return isStatelessTraffic(request.headers, body) ? id : null;
}

function handleGet(proxy: McpProxy, request: ProxyRequest, reply: FastifyReply): void {
  const session = findSession(proxy, request);
  checkedProtocolVersion(request);
  if (!acceptsEventStream(request)) {
    throw gatewayError('REQUEST_INVALID', {
      problem: 'a GET stream needs Accept: text/event-stream',
    });
  }
  const lastEventId = request.headers[MCP_HEADERS.LAST_EVENT_ID];
  if (typeof lastEventId === 'string' && lastEventId !== '') {
    // Resuming one of this session's call streams after a broken connection.
    if (!session.replay.canResume(lastEventId)) {
      throw gatewayError('REQUEST_INVALID', {
        problem: 'Last-Event-ID names no event of this session that can be resumed from',
      });
    }
    reply.hijack();
    startEventStream(reply.raw);
    if (!session.replay.resume(lastEventId, reply.raw)) reply.raw.end();
    return;
  }
  reply.hijack();
  session.serverStream?.end();
  const stream = new ServerStream(reply.raw, {});
  const timer = setInterval(() => stream.keepAlive(), proxy.deps.limits.keepAliveMs);
  timer.unref();
  stream.onClose(() => clearInterval(timer));
  proxy.listen(session, stream);
}

/** The live session the request names, of the same agent, tenant and server. */
function findSession(proxy: McpProxy, request: ProxyRequest): ProxySession {
  const id = request.headers[MCP_HEADERS.SESSION_ID];
  if (typeof id !== 'string' || id === '') {
    throw gatewayError('MCP_SESSION_REQUIRED', { problem: 'send initialize first' });
  }
  const session = proxy.deps.sessions.get(id);
  const caller = request.mcpCaller!;
  const { serverId } = request.params as { serverId: string };
  if (!session) {
    // A session the kill closed, used by its own agent: told why, on every later call.
    const revoked = proxy.deps.sessions.revokedSession(id);
    if (
      revoked?.tenantId === caller.tenantId &&
      revoked.agentId === caller.agentId &&
      revoked.serverId === serverId
    ) {
      const refused = gatewayError('AGENT_REVOKED', { agentId: caller.agentId });
      throw markRefusal(refused, refusedAgent(caller));
    }
    throw gatewayError('MCP_SESSION_NOT_FOUND', { sessionId: id.slice(0, 100) });
  }
  if (
    session.tenantId !== caller.tenantId ||
    session.agentId !== caller.agentId ||
    session.serverId !== serverId
  ) {
    const forbidden = gatewayError('MCP_SESSION_FORBIDDEN', { sessionId: id.slice(0, 100) });
    throw markRefusal(forbidden, refusedAgent(caller));
  }
  return session;
}

function admit(proxy: McpProxy, session: ProxySession, count: number): void {
  const { sessions } = proxy.deps;
  for (let i = 0; i < count; i++) {
    const admission = sessions.admit(session);
    if (admission !== 'ok') {
      for (let j = 0; j < i; j++) sessions.release(session);
      const limit =
        admission === 'session'
          ? sessions.limits.perSessionInFlight
          : sessions.limits.perAgentInFlight;
      throw gatewayError('MCP_CONCURRENCY_LIMIT', { scope: admission, limit });
    }
  }
}

function checkedProtocolVersion(request: FastifyRequest): string | undefined {
  const version = request.headers[MCP_HEADERS.PROTOCOL_VERSION];
  if (version === undefined) return undefined;
  if (typeof version !== 'string' || eraOf(version) !== 'session') {
    throw gatewayError('MCP_PROTOCOL_VERSION_UNSUPPORTED', {
      version: String(version).slice(0, 50),
    });
  }
  return version;
}

function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return (
    typeof accept === 'string' && (accept.includes('text/event-stream') || accept.includes('*/*'))
  );
}

/**
 * True when each message's `params` (or `result`) nests at most MAX_DEPTH levels, as an inspect
 * body's `request.params` does: a message is one level more, a batch two. Iterative.
 */
function withinMessageBounds(body: unknown): boolean {
  return withinJsonBounds(body, MAX_DEPTH + (Array.isArray(body) ? 2 : 1), MAX_NODES);
}

function invalid(problem: string): GatewayError {
  return gatewayError('REQUEST_INVALID', { problem: `the body holds ${problem}` });
}

/** A refusal of the transport: a JSON-RPC error body with the registry's status. */
function sendTransportError(
  reply: FastifyReply,
  error: GatewayError,
  issuer: string,
  serverId: string,
  id: string | number | null = null,
): FastifyReply {
  const code = error.code as ErrorCode;
  const status = ERROR_CODES[code]?.status ?? 500;
  if (status === 401) {
    reply.header('www-authenticate', proxyChallenge(error, issuer, serverId));
  }
  if (status === 429) reply.header('retry-after', '1');
  const rpcCode =
    code === 'REQUEST_INVALID' && /not valid JSON/.test(error.message)
      ? JSONRPC_ERROR_CODES.PARSE_ERROR
      : JSONRPC_ERROR_CODES.INVALID_REQUEST;
  return reply.code(status).send({
    jsonrpc: '2.0',
    id,
    error: {
      code: rpcCode,
      message: `${code}: ${error.message}`,
      data: { reasonCode: code, hint: ERROR_CODES[code]?.hint },
    },
  });
}
