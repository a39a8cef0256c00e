// The MCP proxy's upstream half: a Streamable HTTP client session per downstream session.

export type {
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../../upstream/json-rpc.js';
export {
  CLOSE_TIMEOUT_MS,
  RECONNECT_DEFAULTS,
  type ReconnectOptions,
  type RequestOptions,
  type SendOptions,
  type UpstreamSession,
  type UpstreamSessionConfig,
} from './session.js';
export {
  type OpenedUpstreamSession,
  UpstreamSessions,
  type UpstreamSessionsOptions,
} from './sessions.js';
export { StatelessUpstream, type StatelessUpstreamConfig } from './stateless.js';
export {
  GATEWAY_INPUT_ID_PREFIX,
  type SessionClient,
  StatelessSession,
} from './stateless-session.js';
