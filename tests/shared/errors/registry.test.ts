import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AUDIT_ISSUE_CODES } from '../../../shared/audit/index.js';
import {
  ERROR_CODES,
  type ErrorCodeInfo,
  formatErrorLine,
  formatErrorMessage,
  GatewayError,
  gatewayError,
  isPlaceholderName,
  listPlaceholders,
} from '../../../shared/errors/index.js';
import { renderErrorDocs } from '../../../shared/errors/render-docs.js';

const DOCS = new URL('../../../docs/errors.md', import.meta.url);

describe('the error registry', () => {
  const entries = Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][];

  it('names every code in UPPER_SNAKE_CASE with a summary and a hint', () => {
    for (const [code, info] of entries) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/);
      expect(info.summary.length, code).toBeGreaterThan(10);
      expect(info.hint.length, code).toBeGreaterThan(10);
    }
  });

  it('maps HTTP codes to real statuses and keeps the spec reasonCodes at theirs', () => {
    for (const [code, info] of entries) {
      if (info.status !== null)
        expect(
          [200, 202, 400, 401, 403, 404, 408, 409, 413, 415, 422, 429, 500, 501, 502, 503, 504],
          code,
        ).toContain(info.status);
    }
    expect(ERROR_CODES.MCP_MALFORMED_RPC.status).toBe(400);
    expect(ERROR_CODES.MCP_SERVER_NOT_WHITELISTED.status).toBe(403);
    expect(ERROR_CODES.MCP_METHOD_BLOCKED.status).toBe(403);
    expect(ERROR_CODES.MCP_DESTRUCTIVE_OP_BLOCKED.status).toBe(403);
    expect(ERROR_CODES.MCP_TOKEN_PASSTHROUGH.status).toBe(400);
  });

  it('gives every code one message template whose placeholders are plain identifiers', () => {
    for (const [code, info] of entries) {
      expect(typeof info.message, code).toBe('string');
      expect(info.message.trim().length, code).toBeGreaterThan(0);
      const names = listPlaceholders(info.message);
      for (const name of names) expect(isPlaceholderName(name), `${code}: {${name}}`).toBe(true);
      expect(new Set(names).size, `${code} repeats a placeholder`).toBe(names.length);
      // A brace outside a placeholder would be read as a broken placeholder.
      const literal = info.message.replaceAll(/\{[A-Za-z][A-Za-z0-9]*\}/g, '');
      expect(literal, code).not.toMatch(/[{}]/);
    }
  });

  it('keeps the audit verifier codes apart from the registry, in the same entry shape', () => {
    const registry = new Set(Object.keys(ERROR_CODES));
    for (const [code, info] of Object.entries(AUDIT_ISSUE_CODES)) {
      expect(registry.has(code), `${code} is in both tables`).toBe(false);
      expect(Object.keys(info).sort()).toEqual(['hint', 'status', 'summary']);
      expect(code).toMatch(/^AUDIT_[A-Z0-9_]+$/);
    }
  });

  it('is documented in docs/errors.md exactly as generated', async () => {
    const generated = renderErrorDocs();
    if (process.env.UPDATE_DOCS === '1') await writeFile(DOCS, generated);
    const committed = await readFile(DOCS, 'utf8').catch(() => '');
    expect(
      committed,
      'docs/errors.md is stale: run UPDATE_DOCS=1 npx vitest run tests/shared/errors',
    ).toBe(generated);
  });
});

describe('gatewayError', () => {
  it('renders the message from the template and takes the status and hint from the registry', () => {
    const error = gatewayError('APPROVAL_NOT_FOUND', { approvalId: 'apr_1' });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.code).toBe('APPROVAL_NOT_FOUND');
    expect(error.message).toBe('approval apr_1 not found');
    expect(error.status).toBe(404);
    expect(error.hint).toBe(ERROR_CODES.APPROVAL_NOT_FOUND.hint);
    expect(formatErrorLine(error)).toBe(
      `APPROVAL_NOT_FOUND: approval apr_1 not found (hint: ${ERROR_CODES.APPROVAL_NOT_FOUND.hint})`,
    );
  });

  it('fills every placeholder, including repeated literal text around them', () => {
    expect(
      formatErrorMessage('STORAGE_MIGRATION_DRIFT', {
        migration: '01_init',
        appliedChecksum: 'aaa…',
        fileChecksum: 'bbb…',
      }),
    ).toBe(
      'migration 01_init was changed after it was applied (checksum aaa… in the database, bbb… on disk)',
    );
    expect(
      formatErrorMessage('RATE_LIMITED', { max: 3, window: '1 min', retryAfter: '60 s' }),
    ).toBe('at most 3 requests per 1 min per client; retry in 60 s');
  });

  it('needs no params for a template without placeholders, and keeps cause and details', () => {
    const cause = new Error('boom');
    const error = gatewayError('INTERNAL_ERROR', {}, { cause, details: { requestId: 'r1' } });
    expect(error.message).toBe('unexpected error');
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ requestId: 'r1' });
    expect(gatewayError('REQUEST_UNSUPPORTED_MEDIA_TYPE').message).toBe(
      'request body must be JSON',
    );
  });

  it("takes a subject's own hint when the call site names it, the general hint otherwise", () => {
    const agent = gatewayError('NOT_FOUND', { resource: 'agent a1' }, { hintFor: 'agent' });
    expect(agent.hint).toBe(ERROR_CODES.NOT_FOUND.hints.agent);
    expect(agent.hint).toMatch(/agents GraphQL query.*spawn/);
    expect(gatewayError('NOT_FOUND', { resource: 'route GET /x' }).hint).toBe(
      ERROR_CODES.NOT_FOUND.hint,
    );
    for (const [code, info] of Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][]) {
      for (const hint of Object.values(info.hints ?? {})) {
        expect(hint.length, code).toBeGreaterThan(10);
      }
    }
  });

  it('does not read placeholder syntax inside the values it fills in', () => {
    const error = gatewayError('REQUEST_INVALID', { problem: 'name {problem} is odd' });
    expect(error.message).toBe('name {problem} is odd');
  });
});
