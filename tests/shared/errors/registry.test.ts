import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCodeInfo } from '../../../shared/errors/index.js';
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
          [200, 202, 400, 401, 403, 404, 408, 409, 413, 415, 429, 500, 502, 503, 504],
          code,
        ).toContain(info.status);
    }
    expect(ERROR_CODES.MCP_MALFORMED_RPC.status).toBe(400);
    expect(ERROR_CODES.MCP_SERVER_NOT_WHITELISTED.status).toBe(403);
    expect(ERROR_CODES.MCP_METHOD_BLOCKED.status).toBe(403);
    expect(ERROR_CODES.MCP_DESTRUCTIVE_OP_BLOCKED.status).toBe(403);
    expect(ERROR_CODES.MCP_TOKEN_PASSTHROUGH.status).toBe(400);
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
