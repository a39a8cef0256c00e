// The MCP protocol facts (shared/mcp/protocol.ts): the revisions are real dates, newest first, each
// once; every revision offered or used as the newest is one the gateway speaks, and so is every one
// the official SDK negotiates (a client on it must not be refused its MCP-Protocol-Version); the
// header names, error codes and methods are each distinct. Pure: milliseconds.
import { SUPPORTED_PROTOCOL_VERSIONS as SDK_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  INSPECT_OFFERED_PROTOCOL_VERSION,
  isSupportedProtocolVersion,
  JSONRPC_ERROR_CODES,
  LATEST_PROTOCOL_VERSION,
  MCP_ACCEPT,
  MCP_HEADERS,
  MCP_METHODS,
  MCP_PROTOCOL_VERSIONS,
} from '../../../shared/mcp/protocol.js';

describe('protocol revisions', () => {
  it('are calendar dates (YYYY-MM-DD)', () => {
    for (const version of MCP_PROTOCOL_VERSIONS) {
      expect(version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new Date(`${version}T00:00:00Z`).toISOString().slice(0, 10)).toBe(version);
    }
  });

  it('are listed newest first, each once', () => {
    for (let i = 1; i < MCP_PROTOCOL_VERSIONS.length; i++) {
      expect(MCP_PROTOCOL_VERSIONS[i - 1]! > MCP_PROTOCOL_VERSIONS[i]!).toBe(true);
    }
    expect(LATEST_PROTOCOL_VERSION).toBe(MCP_PROTOCOL_VERSIONS[0]);
  });

  it('include what the inspect forwarder offers', () => {
    expect(isSupportedProtocolVersion(INSPECT_OFFERED_PROTOCOL_VERSION)).toBe(true);
  });

  it('include every revision the official SDK negotiates', () => {
    for (const version of SDK_PROTOCOL_VERSIONS) {
      expect(isSupportedProtocolVersion(version), version).toBe(true);
    }
  });

  it('are recognised exactly: no neighbour, prefix or padding passes', () => {
    for (const version of MCP_PROTOCOL_VERSIONS) {
      expect(isSupportedProtocolVersion(version)).toBe(true);
      expect(isSupportedProtocolVersion(` ${version}`)).toBe(false);
      expect(isSupportedProtocolVersion(version.slice(0, 7))).toBe(false);
    }
    for (const other of ['', '2025-11-26', '2026-01-01', 'latest']) {
      expect(isSupportedProtocolVersion(other)).toBe(false);
    }
  });
});

describe('header names', () => {
  it('are distinct lower-case HTTP tokens (as node presents incoming headers)', () => {
    const names = Object.values(MCP_HEADERS);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it('accept both answers on a POST and a stream on a GET', () => {
    expect(MCP_ACCEPT.POST.split(', ').sort()).toEqual(['application/json', 'text/event-stream']);
    expect(MCP_ACCEPT.STREAM).toBe('text/event-stream');
  });
});

describe('JSON-RPC error codes', () => {
  it('are distinct integers of the range JSON-RPC 2.0 reserves', () => {
    const codes = Object.values(JSONRPC_ERROR_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) {
      expect(Number.isInteger(code)).toBe(true);
      expect(code).toBeGreaterThanOrEqual(-32768);
      expect(code).toBeLessThanOrEqual(-32000);
    }
  });

  it("keep JSON-RPC's predefined values, and the gateway's own in the server error range", () => {
    expect(JSONRPC_ERROR_CODES).toMatchObject({
      PARSE_ERROR: -32700,
      INVALID_REQUEST: -32600,
      INTERNAL_ERROR: -32603,
    });
    for (const code of [JSONRPC_ERROR_CODES.GATEWAY_DENIED, JSONRPC_ERROR_CODES.UPSTREAM_FAILED]) {
      expect(code).toBeGreaterThanOrEqual(-32099);
      expect(code).toBeLessThanOrEqual(-32000);
    }
  });
});

describe('methods', () => {
  it('are distinct, notifications under notifications/', () => {
    const methods = Object.values(MCP_METHODS);
    expect(new Set(methods).size).toBe(methods.length);
    expect(MCP_METHODS.INITIALIZED.startsWith('notifications/')).toBe(true);
    expect(MCP_METHODS.PROGRESS.startsWith('notifications/')).toBe(true);
    expect(MCP_METHODS.MESSAGE.startsWith('notifications/')).toBe(true);
  });
});
