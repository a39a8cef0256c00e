// Shared assertions of the inspect end-to-end tests: the shape of a block answer (status, decision,
// reasonCode, the JSON-RPC error in `response`), the audit row behind an `auditId` read the moment
// the answer is observed, and a tenant wired to a real MCP upstream in production mode.
import { createServer } from 'node:net';
import { expect } from 'vitest';
import type { Database } from '../../../storage/engine/database.js';
import { type DatabaseKindUnderTest, postgresUrl } from '../../support/databases.js';
import type { TestGateway, TestTenant } from '../../support/gateway.js';
import type { McpUpstream } from '../../support/mcp-upstream.js';

export interface AuditRow {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly metadata: Record<string, unknown>;
}

export async function findAuditEntry(db: Database, id: unknown): Promise<AuditRow | undefined> {
  if (typeof id !== 'string') return undefined;
  const rows = await db.query<AuditRow>(
    `select id, "tenantId", action, "resourceType", "resourceId", metadata
       from audit_entries where id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  const metadata = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata;
  return { ...row, metadata };
}

export async function countAuditEntries(db: Database, tenantId?: string): Promise<number> {
  const rows = await db.query<{ n: number | string }>(
    tenantId === undefined
      ? 'select count(*)::int as n from audit_entries'
      : 'select count(*)::int as n from audit_entries where "tenantId" = $1',
    tenantId === undefined ? [] : [tenantId],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Asserts a decision-shaped deny: exact status, decision, reasonCode, the JSON-RPC error in
 * `response` (-32600 for malformed requests, -32001 for blocks) carrying the reasonCode, and an
 * audit row `inspect.deny` of the tenant that is already committed. Returns the audit row.
 */
export async function expectDeny(
  gateway: TestGateway,
  answer: { status: number; body: Record<string, unknown> },
  expected: {
    status: number;
    reasonCode: string;
    tenantId: string;
    rpcId?: string | number | null;
    action?: string;
  },
): Promise<AuditRow> {
  const { status, body } = answer;
  expect({ status, decision: body.decision, reasonCode: body.reasonCode }).toEqual({
    status: expected.status,
    decision: 'deny',
    reasonCode: expected.reasonCode,
  });
  expect(body.enforced).toBe(true);
  expect(typeof body.inspectionId).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(typeof body.hint).toBe('string');
  if (expected.reasonCode === 'MCP_MALFORMED_RPC') {
    // A malformed call lists every wrong field and names the page of the request.
    expect(body.issues).toEqual(
      expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]),
    );
    expect(body.docs).toBe('docs/inspect.md#request');
  }
  expect(body.response).toEqual({
    jsonrpc: '2.0',
    id: expected.rpcId === undefined ? 1 : expected.rpcId,
    error: {
      code: expected.reasonCode === 'MCP_MALFORMED_RPC' ? -32600 : -32001,
      message: body.message,
      data: { reasonCode: expected.reasonCode },
    },
  });
  // Read at once: the audit entry must be durable before the answer leaves.
  const row = await findAuditEntry(gateway.db, body.auditId);
  expect(row, `audit entry ${String(body.auditId)}`).toBeDefined();
  expect(row).toMatchObject({
    tenantId: expected.tenantId,
    action: expected.action ?? 'inspect.deny',
    metadata: {
      decision: 'deny',
      reasonCode: expected.reasonCode,
      inspectionId: body.inspectionId,
    },
  });
  return row as AuditRow;
}

/** Registers `serverId` (default 'files') for the tenant at the upstream's URL. */
export async function connectUpstream(
  gateway: TestGateway,
  tenant: TestTenant,
  upstream: McpUpstream | { url: string },
  options: { serverId?: string; toolAnnotations?: Record<string, unknown> } = {},
): Promise<void> {
  const serverId = options.serverId ?? 'files';
  await gateway.registerServer({
    tenantId: tenant.id,
    serverId,
    url: upstream.url,
    ...(options.toolAnnotations ? { toolAnnotations: options.toolAnnotations } : {}),
  });
}

/** A URL on 127.0.0.1 where nothing listens (the port was just free). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}

/** Total tool calls the upstream ran. */
export function totalCalls(upstream: McpUpstream): number {
  let total = 0;
  for (const n of upstream.calls.values()) total += n;
  return total;
}

/** GET an approval, optionally long-polling. */
export async function getApproval(
  gateway: TestGateway,
  id: string,
  init: { key?: string; wait?: number } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const query = init.wait === undefined ? '' : `?wait=${init.wait}`;
  const response = await fetch(
    `${gateway.url}/api/v1/mcp/gateway/approvals/${encodeURIComponent(id)}${query}`,
    { headers: { authorization: `Bearer ${init.key ?? gateway.tenant.key}` } },
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Marks an agent killed the way the kill switch does, and publishes the change. */
export async function killAgent(gateway: TestGateway, tenantId: string, agentId: string) {
  await gateway.db.prisma.$transaction([
    gateway.db.prisma.agent.update({ where: { id: agentId }, data: { status: 'killed' } }),
    gateway.db.prisma.tenant.update({
      where: { id: tenantId },
      data: { configVersion: { increment: 1 } },
    }),
  ]);
  await gateway.sync();
}

/** The database the single-database files use: PostgreSQL when available (it starts faster). */
export const quickDatabaseKind: DatabaseKindUnderTest = postgresUrl ? 'postgres' : 'pglite';
