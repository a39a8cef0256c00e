// What MCP 2026-07-28 requires of a stateless request (shared/mcp/stateless-request.ts): which
// POSTs are of that era, each refusal with its JSON-RPC code and reason, the Base64 sentinel of
// header values, and that no input makes the check throw. Pure: milliseconds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JSONRPC_ERROR_CODES,
  MCP_META_KEYS,
  STATELESS_PROTOCOL_VERSIONS,
} from '../../../shared/mcp/protocol.js';
import {
  checkStatelessRequest,
  decodeHeaderValue,
  encodeHeaderValue,
  isRefusal,
  isStatelessTraffic,
  type RequestHeaders,
  type StatelessRefusal,
} from '../../../shared/mcp/stateless-request.js';
import { propertyRuns } from '../../support/property-runs.js';

const VERSION = '2026-07-28';
const META = {
  [MCP_META_KEYS.PROTOCOL_VERSION]: VERSION,
  [MCP_META_KEYS.CLIENT_INFO]: { name: 'test', version: '1' },
  [MCP_META_KEYS.CLIENT_CAPABILITIES]: {},
};

function call(name: string, meta: Record<string, unknown> | null = META) {
  return {
    method: 'tools/call',
    params: { name, arguments: {}, ...(meta === null ? {} : { _meta: meta }) },
  };
}

function headers(extra: Record<string, string | undefined> = {}): RequestHeaders {
  return {
    'mcp-protocol-version': VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
    ...extra,
  };
}

function refusal(checked: ReturnType<typeof checkStatelessRequest>): StatelessRefusal {
  if (!isRefusal(checked)) throw new Error('expected a refusal');
  return checked;
}

describe('which POSTs are of the stateless era', () => {
  it('is a request with the era’s _meta, or with a protocol version header of no session', () => {
    expect(isStatelessTraffic({}, call('echo'))).toBe(true);
    expect(isStatelessTraffic({ 'mcp-protocol-version': VERSION }, { method: 'x' })).toBe(true);
    expect(isStatelessTraffic({ 'mcp-protocol-version': '1900-01-01' }, { method: 'x' })).toBe(
      true,
    );
  });

  it('is not a session’s request, an initialize, or a session-era header without _meta', () => {
    expect(isStatelessTraffic({ 'mcp-session-id': 's' }, call('echo'))).toBe(false);
    expect(isStatelessTraffic({}, { method: 'initialize', params: { capabilities: {} } })).toBe(
      false,
    );
    expect(isStatelessTraffic({ 'mcp-protocol-version': '2025-11-25' }, { method: 'x' })).toBe(
      false,
    );
    expect(
      isStatelessTraffic({}, { method: 'tools/call', params: { _meta: { progressToken: 1 } } }),
    ).toBe(false);
  });
});

describe('a request the revision accepts', () => {
  it('gives its version, client capabilities and client info', () => {
    const checked = checkStatelessRequest(headers(), call('echo'));
    expect(checked).toEqual({
      version: VERSION,
      clientCapabilities: {},
      clientInfo: { name: 'test', version: '1' },
    });
  });

  it('accepts Mcp-Name in the Base64 sentinel, and a name with surrounding whitespace trimmed', () => {
    const name = 'héllo wörld';
    const encoded = `=?base64?${Buffer.from(name).toString('base64')}?=`;
    expect(isRefusal(checkStatelessRequest(headers({ 'mcp-name': encoded }), call(name)))).toBe(
      false,
    );
    expect(isRefusal(checkStatelessRequest(headers({ 'mcp-name': ' echo\t' }), call('echo')))).toBe(
      false,
    );
  });

  it('reads Mcp-Name from params.uri for resources/read, and needs none for tools/list', () => {
    const read = { method: 'resources/read', params: { uri: 'file:///a b', _meta: META } };
    expect(
      isRefusal(
        checkStatelessRequest(
          headers({ 'mcp-method': 'resources/read', 'mcp-name': 'file:///a b' }),
          read,
        ),
      ),
    ).toBe(false);
    const list = { method: 'tools/list', params: { _meta: META } };
    expect(
      isRefusal(
        checkStatelessRequest(headers({ 'mcp-method': 'tools/list', 'mcp-name': undefined }), list),
      ),
    ).toBe(false);
  });
});

describe('each refusal', () => {
  it.each([
    ['no MCP-Protocol-Version', headers({ 'mcp-protocol-version': undefined }), call('echo')],
    ['header and _meta disagree', headers({ 'mcp-protocol-version': '2026-07-29' }), call('echo')],
    ['no Mcp-Method', headers({ 'mcp-method': undefined }), call('echo')],
    ['Mcp-Method of another method', headers({ 'mcp-method': 'tools/list' }), call('echo')],
    ['Mcp-Method in another case', headers({ 'mcp-method': 'TOOLS/CALL' }), call('echo')],
    ['no Mcp-Name for a named call', headers({ 'mcp-name': undefined }), call('echo')],
    ['Mcp-Name of another tool', headers({ 'mcp-name': 'other' }), call('echo')],
    ['Mcp-Name with broken Base64', headers({ 'mcp-name': '=?base64?@@@@?=' }), call('echo')],
  ])('%s: HeaderMismatch (-32020)', (_case, requestHeaders, message) => {
    const refused = refusal(checkStatelessRequest(requestHeaders, message));
    expect(refused.rpcCode).toBe(JSONRPC_ERROR_CODES.HEADER_MISMATCH);
    expect(refused.reasonCode).toBe('MCP_HEADER_MISMATCH');
  });

  it.each([
    ['no _meta', call('echo', null)],
    ['no protocol version in _meta', call('echo', { [MCP_META_KEYS.CLIENT_CAPABILITIES]: {} })],
    ['no capabilities', call('echo', { [MCP_META_KEYS.PROTOCOL_VERSION]: VERSION })],
    [
      'capabilities that are not an object',
      call('echo', { ...META, [MCP_META_KEYS.CLIENT_CAPABILITIES]: ['sampling'] }),
    ],
    [
      'clientInfo that is not an object',
      call('echo', { ...META, [MCP_META_KEYS.CLIENT_INFO]: 'x' }),
    ],
  ])('%s: Invalid params (-32602)', (_case, message) => {
    const refused = refusal(checkStatelessRequest(headers(), message));
    expect(refused.rpcCode).toBe(JSONRPC_ERROR_CODES.INVALID_PARAMS);
    expect(refused.reasonCode).toBe('MCP_META_INVALID');
  });

  it('an unknown or session-era version: UnsupportedProtocolVersion (-32022) naming both', () => {
    for (const version of ['1900-01-01', '2025-11-25']) {
      const message = call('echo', { ...META, [MCP_META_KEYS.PROTOCOL_VERSION]: version });
      const refused = refusal(
        checkStatelessRequest(headers({ 'mcp-protocol-version': version }), message),
      );
      expect(refused.rpcCode).toBe(JSONRPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION);
      expect(refused.reasonCode).toBe('MCP_PROTOCOL_VERSION_UNSUPPORTED');
      expect(refused.data).toEqual({ supported: STATELESS_PROTOCOL_VERSIONS, requested: version });
    }
  });

  it('names what failed without repeating a long value in full', () => {
    const long = 'x'.repeat(10_000);
    const refused = refusal(checkStatelessRequest(headers({ 'mcp-name': long }), call('echo')));
    expect(refused.problem.length).toBeLessThan(300);
  });
});

describe('header values in the Base64 sentinel', () => {
  it('decodes the sentinel, passes a plain value, refuses what is not Base64 of UTF-8', () => {
    expect(decodeHeaderValue('us-west1')).toBe('us-west1');
    expect(decodeHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?=')).toBe('Hello, 世界');
    expect(decodeHeaderValue('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=')).toBe('=?base64?literal?=');
    expect(decodeHeaderValue('=?base64?abc?=')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?/w==?=')).toBeUndefined(); // 0xff: not UTF-8
    expect(decodeHeaderValue('=?BASE64?SGk=?=')).toBe('=?BASE64?SGk=?='); // markers are lower case
  });

  it('round-trips any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        expect(decodeHeaderValue(`=?base64?${Buffer.from(text).toString('base64')}?=`)).toBe(text);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('encodes what is not plain printable ASCII, and the encoding decodes back', () => {
    expect(encodeHeaderValue('echo')).toBe('echo');
    expect(encodeHeaderValue('Hello, 世界')).toBe('=?base64?SGVsbG8sIOS4lueVjA==?=');
    expect(encodeHeaderValue(' padded')).toMatch(/^=\?base64\?/);
    expect(encodeHeaderValue('=?base64?literal?=')).toBe('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const encoded = encodeHeaderValue(text);
        expect(encoded).toMatch(/^[\x20-\x7e]*$/);
        expect(decodeHeaderValue(encoded)).toBe(text);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('any input', () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  it('is classified and checked without throwing; a pass always has an object of capabilities', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id'),
          fc.oneof(fc.string(), fc.constantFrom(VERSION, 'tools/call', 'echo', '2025-11-25')),
        ),
        fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'prompts/get', 'x'),
        fc.oneof(
          json,
          fc.record({
            name: fc.oneof(fc.constant('echo'), fc.string()),
            _meta: fc.oneof(json, fc.constant(META)),
          }),
        ),
        (requestHeaders, method, params) => {
          const message = { method, params: params as Record<string, unknown> };
          isStatelessTraffic(requestHeaders, message);
          const checked = checkStatelessRequest(requestHeaders, message);
          if (isRefusal(checked)) {
            expect([-32020, -32602, -32022]).toContain(checked.rpcCode);
          } else {
            expect(checked.version).toBe(VERSION);
            expect(typeof checked.clientCapabilities).toBe('object');
          }
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });
});
