// What MCP's stateless era (2026-07-28) requires of a request on Streamable HTTP before anyone
// acts on it, checked in the order the reference server and the conformance suite use:
// 1. `MCP-Protocol-Version` is present (else HeaderMismatch, -32020);
// 2. `params._meta` carries `io.modelcontextprotocol/protocolVersion` (a string) and
//    `io.modelcontextprotocol/clientCapabilities` (an object); `clientInfo`, a SHOULD, is an
//    object when present (else Invalid params, -32602);
// 3. the header names the same revision as `_meta` (else -32020);
// 4. the revision is one of the stateless era the gateway speaks (else
//    UnsupportedProtocolVersion, -32022, with `supported`: the stateless revisions, as
//    server/discover lists them; session-era clients start with initialize instead);
// 5. `Mcp-Method` equals `method`, case-sensitively (else -32020);
// 6. for tools/call and prompts/get `Mcp-Name` equals `params.name`, for resources/read
//    `params.uri`, after the Base64 sentinel (`=?base64?…?=`) is decoded (else -32020).
// Every failure is HTTP 400 and names what failed; the caller answers it with the request's id.
// Which era a POST belongs to is `isStatelessTraffic`: no session id, and either a stateless
// `_meta` or an MCP-Protocol-Version header that is not a session-era revision sent without
// `_meta` (the reference server's rule: a session-era client's first request, initialize, carries
// neither; a stateless `_meta` is one with an `io.modelcontextprotocol/` key). `Mcp-Param-*` headers are not read: the gateway governs the body, and forwards them
// for the upstream to check against its own tool schemas. Pure.
import {
  eraOf,
  JSONRPC_ERROR_CODES,
  MCP_HEADERS,
  MCP_META_KEYS,
  MCP_METHODS,
  STATELESS_PROTOCOL_VERSIONS,
  type StatelessProtocolVersion,
} from './protocol.js';

/** The headers read here, as node presents them (lower-case names). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface StatelessRequest {
  readonly version: StatelessProtocolVersion;
  /** `_meta['io.modelcontextprotocol/clientCapabilities']`. */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** `_meta['io.modelcontextprotocol/clientInfo']`, when given. */
  readonly clientInfo?: Readonly<Record<string, unknown>>;
}

export type StatelessReasonCode =
  | 'MCP_HEADER_MISMATCH'
  | 'MCP_META_INVALID'
  | 'MCP_PROTOCOL_VERSION_UNSUPPORTED';

export interface StatelessRefusal {
  /** The JSON-RPC error code the revision prescribes. */
  readonly rpcCode: number;
  readonly reasonCode: StatelessReasonCode;
  /** What failed, naming the header or field (never longer than a few hundred characters). */
  readonly problem: string;
  /** UnsupportedProtocolVersion's `data`: the revisions served and the one requested. */
  readonly data?: { readonly supported: readonly string[]; readonly requested: string };
}

/** The methods whose `Mcp-Name` header is required, and the param it mirrors. */
const NAMED_PARAM: Readonly<Record<string, 'name' | 'uri'>> = {
  [MCP_METHODS.TOOLS_CALL]: 'name',
  [MCP_METHODS.PROMPTS_GET]: 'name',
  [MCP_METHODS.RESOURCES_READ]: 'uri',
};

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SHOWN = 120;
const MCP_META_PREFIX = 'io.modelcontextprotocol/';

/** True when a POST without a session belongs to the stateless era (see the opening comment). */
export function isStatelessTraffic(headers: RequestHeaders, message: unknown): boolean {
  if (headers[MCP_HEADERS.SESSION_ID] !== undefined) return false;
  const meta = metaOf(message);
  if (meta !== undefined && Object.keys(meta).some((key) => key.startsWith(MCP_META_PREFIX))) {
    return true;
  }
  const version = headers[MCP_HEADERS.PROTOCOL_VERSION];
  return version !== undefined && !(typeof version === 'string' && eraOf(version) === 'session');
}

/** The request's stateless facts, or why it must be refused (HTTP 400 in every case). */
export function checkStatelessRequest(
  headers: RequestHeaders,
  message: { readonly method: string; readonly params?: Readonly<Record<string, unknown>> },
): StatelessRequest | StatelessRefusal {
  const header = single(headers[MCP_HEADERS.PROTOCOL_VERSION]);
  if (header === undefined) return mismatch('the MCP-Protocol-Version header is missing');
  const meta = metaOf(message);
  if (meta === undefined) return invalidMeta('params._meta is missing');
  const version = meta[MCP_META_KEYS.PROTOCOL_VERSION];
  if (typeof version !== 'string' || version === '') {
    return invalidMeta(`params._meta["${MCP_META_KEYS.PROTOCOL_VERSION}"] is missing`);
  }
  const capabilities = meta[MCP_META_KEYS.CLIENT_CAPABILITIES];
  if (!isObject(capabilities)) {
    return invalidMeta(
      `params._meta["${MCP_META_KEYS.CLIENT_CAPABILITIES}"] is missing or not an object`,
    );
  }
  const clientInfo = meta[MCP_META_KEYS.CLIENT_INFO];
  if (clientInfo !== undefined && !isObject(clientInfo)) {
    return invalidMeta(`params._meta["${MCP_META_KEYS.CLIENT_INFO}"] is not an object`);
  }
  if (header !== version) {
    return mismatch(
      `MCP-Protocol-Version ${shown(header)} does not match params._meta's ${shown(version)}`,
    );
  }
  if (eraOf(version) !== 'stateless') {
    return {
      rpcCode: JSONRPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION,
      reasonCode: 'MCP_PROTOCOL_VERSION_UNSUPPORTED',
      problem: `protocol version ${shown(version)} is not served without a session`,
      data: { supported: STATELESS_PROTOCOL_VERSIONS, requested: version.slice(0, SHOWN) },
    };
  }
  const method = single(headers[MCP_HEADERS.METHOD])?.trim();
  if (method === undefined) return mismatch('the Mcp-Method header is missing');
  if (method !== message.method) {
    return mismatch(`Mcp-Method ${shown(method)} does not match the body's method`);
  }
  const param = NAMED_PARAM[message.method];
  if (param !== undefined) {
    const value = message.params?.[param];
    const raw = single(headers[MCP_HEADERS.NAME]);
    if (raw === undefined) {
      if (value !== undefined) return mismatch('the Mcp-Name header is missing');
    } else {
      const name = decodeHeaderValue(raw.trim());
      if (name === undefined) return mismatch('the Mcp-Name header is not valid Base64');
      if (name !== value) {
        return mismatch(`Mcp-Name ${shown(name)} does not match params.${param}`);
      }
    }
  }
  return {
    version: version as StatelessProtocolVersion,
    clientCapabilities: capabilities,
    ...(clientInfo === undefined ? {} : { clientInfo }),
  };
}

export function isRefusal(
  checked: StatelessRequest | StatelessRefusal,
): checked is StatelessRefusal {
  return 'reasonCode' in checked;
}

/**
 * A header value as the revision encodes it: plain, or `=?base64?<Base64 of UTF-8>?=`; undefined
 * when the sentinel holds something that is not Base64 of valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (
    value.length < SENTINEL_START.length + SENTINEL_END.length ||
    !value.startsWith(SENTINEL_START) ||
    !value.endsWith(SENTINEL_END)
  ) {
    return value;
  }
  const encoded = value.slice(SENTINEL_START.length, -SENTINEL_END.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

/** Printable ASCII without leading or trailing space: what travels in a header as it is. */
const PLAIN_HEADER_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/**
 * `value` as a header of this era carries it: as it is when it is plain printable ASCII (and not
 * itself shaped like the sentinel), else `=?base64?<Base64 of UTF-8>?=`; decodeHeaderValue's
 * inverse.
 */
export function encodeHeaderValue(value: string): string {
  const plain =
    PLAIN_HEADER_VALUE.test(value) &&
    !(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END));
  return plain
    ? value
    : `${SENTINEL_START}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_END}`;
}

/**
 * What a client of this era writes for a request it sends, as the gateway writes it when it is
 * the client (a bridged session, the inspect forwarder): the request's own `_meta` with the
 * era's keys set, and the headers naming its method and name (the latter in the Base64 sentinel
 * when it is not plain ASCII); the revision's own header is the caller's.
 */
export function statelessMeta(
  own: unknown,
  client: {
    readonly clientInfo?: unknown;
    readonly capabilities: Readonly<Record<string, unknown>>;
    readonly logLevel?: string | undefined;
  },
): Record<string, unknown> {
  return {
    ...(isObject(own) ? own : {}),
    [MCP_META_KEYS.PROTOCOL_VERSION]: STATELESS_PROTOCOL_VERSIONS[0],
    ...(isObject(client.clientInfo) ? { [MCP_META_KEYS.CLIENT_INFO]: client.clientInfo } : {}),
    [MCP_META_KEYS.CLIENT_CAPABILITIES]: client.capabilities,
    ...(client.logLevel === undefined ? {} : { [MCP_META_KEYS.LOG_LEVEL]: client.logLevel }),
  };
}

/** The Mcp-Method and Mcp-Name headers of a request (flat: name, value, …). */
export function statelessRequestHeaders(method: string, params: unknown): string[] {
  const name = namedValueOf(method, params);
  return [
    MCP_HEADERS.METHOD,
    method,
    ...(name === undefined ? [] : [MCP_HEADERS.NAME, encodeHeaderValue(name)]),
  ];
}

/** The request's own value that Mcp-Name mirrors (its tool, prompt or resource), if any. */
export function namedValueOf(method: string, params: unknown): string | undefined {
  const param = NAMED_PARAM[method];
  if (param === undefined || !isObject(params)) return undefined;
  const value = params[param];
  return typeof value === 'string' ? value : undefined;
}

function metaOf(message: unknown): Readonly<Record<string, unknown>> | undefined {
  if (!isObject(message)) return undefined;
  const params = message.params;
  if (!isObject(params)) return undefined;
  const meta = params._meta;
  return isObject(meta) ? meta : undefined;
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One header value: node joins most repeated headers with ", "; a list is taken as absent. */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function shown(value: string): string {
  return JSON.stringify(value.length > SHOWN ? `${value.slice(0, SHOWN)}…` : value);
}

function mismatch(problem: string): StatelessRefusal {
  return {
    rpcCode: JSONRPC_ERROR_CODES.HEADER_MISMATCH,
    reasonCode: 'MCP_HEADER_MISMATCH',
    problem,
  };
}

function invalidMeta(problem: string): StatelessRefusal {
  return { rpcCode: JSONRPC_ERROR_CODES.INVALID_PARAMS, reasonCode: 'MCP_META_INVALID', problem };
}
