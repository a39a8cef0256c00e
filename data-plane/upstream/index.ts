// The forwarding client of the data plane's production mode (MCP Streamable HTTP, undici).
// See docs/upstream.md.
export {
  createUpstreamClient,
  type ForwardRequest,
  type ForwardResult,
  type ListToolsOptions,
  MAX_TOOL_PAGES,
  MAX_TOOLS,
  UPSTREAM_DEFAULTS,
  type UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamTarget,
  type UpstreamTool,
  type UpstreamToolDefinition,
} from './client.js';
export {
  createEgressConnector,
  DEFAULT_UPSTREAM_EGRESS,
  resolveWithDns,
  type UpstreamEgress,
} from './egress-connector.js';
export { UPSTREAM_ERROR_CODES, UpstreamError, type UpstreamErrorCode } from './errors.js';
export type {
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
} from './json-rpc.js';
export { type SseEvent, SseParser } from './sse-parser.js';
