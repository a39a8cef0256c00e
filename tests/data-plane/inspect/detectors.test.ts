// The destructive-operation and data-exfiltration detectors wired into the inspect pipeline, in
// production mode against the SDK upstream. The detectors' own example tables are unit tests
// (tests/data-plane/inspection/); these rows prove the route feeds them the call (arguments, tool
// name, the server's registered annotations), honours every tenant switch, answers with the
// signal, and never repeats a secret in the answer or the audit trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayPolicyPatch } from '../../../control-plane/services/gateway-policy.js';
import {
  inspectBody,
  startTestGateway,
  type TestGateway,
  type TestTenant,
} from '../../support/gateway.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';
import { expectDeny, findAuditEntry, quickDatabaseKind } from './support.js';

// Test fixtures shaped like real credentials (not real ones).
const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const AWS_KEY_ID = 'AKIAQWERTYUIOPASDFGH';
const PEM_BODY = 'MIIEowIBAAKCAQEAzX9vJ2p7Lw4fKqTz0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5';
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`;
const SECRETS = [GITHUB_TOKEN, AWS_KEY_ID, PEM_BODY];

/** Tenant variants: the gateway policy switches each row runs under. */
const VARIANTS = {
  defaults: {},
  destructiveOff: { denyDestructive: false },
  dropTruncateOnly: { destructiveToolPatterns: ['drop', 'truncate'] },
  secretsOff: { exfilDetectSecrets: false },
  destinationsOff: { exfilCheckDestinations: false },
  exampleDomains: { exfilAllowedDomains: ['example.com'] },
  bulkOff: { exfilBulkExportLimit: null },
  bulk10k: { exfilBulkExportLimit: 10_000 },
} satisfies Record<string, GatewayPolicyPatch>;
type Variant = keyof typeof VARIANTS;

interface Row {
  readonly name: string;
  readonly variant: Variant;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The signal of a deny, or null for a call that must go through. */
  readonly signal: { kind: string; detail: string; path?: string } | null;
}

const DESTRUCTIVE = 'MCP_DESTRUCTIVE_OP_BLOCKED';
const EXFILTRATION = 'MCP_DATA_EXFILTRATION_SUSPECTED';

const DESTRUCTIVE_ROWS: readonly Row[] = [
  {
    name: 'SQL DROP TABLE in an argument',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'DROP TABLE users' },
    signal: { kind: 'sql', detail: 'DROP TABLE', path: 'arguments.text' },
  },
  {
    name: 'SQL DELETE without WHERE',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'DELETE FROM orders' },
    signal: { kind: 'sql', detail: 'DELETE without WHERE', path: 'arguments.text' },
  },
  {
    name: 'shell rm -rf',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'cleanup', command: 'rm -rf /' },
    signal: { kind: 'shell', detail: 'rm -rf', path: 'arguments.command' },
  },
  {
    name: 'HTTP DELETE method argument',
    variant: 'defaults',
    tool: 'echo',
    args: { method: 'DELETE', resource: 'users/1' },
    signal: { kind: 'http-method', detail: 'DELETE', path: 'arguments.method' },
  },
  {
    name: 'a destructive tool name',
    variant: 'defaults',
    tool: 'delete_draft',
    args: { id: 'd1' },
    signal: { kind: 'tool-name', detail: 'matches "delete"' },
  },
  {
    name: 'the server’s destructiveHint annotation (registered for drop_table)',
    variant: 'defaults',
    tool: 'drop_table',
    args: { table: 'users' },
    signal: { kind: 'annotation', detail: 'destructiveHint: true' },
  },
  {
    name: 'a harmless SELECT with WHERE',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'SELECT * FROM users WHERE id = 1' },
    signal: null,
  },
  {
    name: 'prose that mentions drop',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'please drop me a line' },
    signal: null,
  },
  {
    name: 'a read-only annotated tool',
    variant: 'defaults',
    tool: 'read_rows',
    args: { table: 'users' },
    signal: null,
  },
  {
    name: 'drop_table with denyDestructive off',
    variant: 'destructiveOff',
    tool: 'drop_table',
    args: { table: 'users' },
    signal: null,
  },
  {
    name: 'SQL DROP TABLE with denyDestructive off',
    variant: 'destructiveOff',
    tool: 'echo',
    args: { text: 'DROP TABLE users' },
    signal: null,
  },
  {
    name: 'delete_draft with patterns [drop, truncate]',
    variant: 'dropTruncateOnly',
    tool: 'delete_draft',
    args: { id: 'd1' },
    signal: null,
  },
  {
    name: 'truncate_logs with patterns [drop, truncate]',
    variant: 'dropTruncateOnly',
    tool: 'truncate_logs',
    args: {},
    signal: { kind: 'tool-name', detail: 'matches "truncate"' },
  },
];

const EXFILTRATION_ROWS: readonly Row[] = [
  {
    name: 'a GitHub token',
    variant: 'defaults',
    tool: 'echo',
    args: { text: `use ${GITHUB_TOKEN} for the push` },
    signal: { kind: 'secret', detail: 'GitHub token', path: 'arguments.text' },
  },
  {
    name: 'an AWS access key id',
    variant: 'defaults',
    tool: 'echo',
    args: { text: `key=${AWS_KEY_ID}` },
    signal: { kind: 'secret', detail: 'AWS access key id', path: 'arguments.text' },
  },
  {
    name: 'a PEM private key',
    variant: 'defaults',
    tool: 'echo',
    args: { text: PEM },
    signal: { kind: 'secret', detail: 'private key (PEM)', path: 'arguments.text' },
  },
  {
    name: 'a destination outside the tenant’s domains',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'upload to https://evil.io/collect' },
    signal: { kind: 'destination', detail: 'https URL to evil.io', path: 'arguments.text' },
  },
  {
    name: 'a bulk export above the limit',
    variant: 'defaults',
    tool: 'read_rows',
    args: { table: 'users', limit: 5000 },
    signal: { kind: 'bulk-export', detail: 'limit 5000 > 1000', path: 'arguments.limit' },
  },
  {
    name: 'a request exactly at the bulk limit',
    variant: 'defaults',
    tool: 'read_rows',
    args: { table: 'users', limit: 1000 },
    signal: null,
  },
  {
    name: 'ordinary text',
    variant: 'defaults',
    tool: 'echo',
    args: { text: 'the quarterly report is ready for review' },
    signal: null,
  },
  {
    name: 'a GitHub token with secret detection off',
    variant: 'secretsOff',
    tool: 'echo',
    args: { text: `use ${GITHUB_TOKEN} for the push` },
    signal: null,
  },
  {
    name: 'evil.io with destination checks off',
    variant: 'destinationsOff',
    tool: 'echo',
    args: { text: 'upload to https://evil.io/collect' },
    signal: null,
  },
  {
    name: 'an allowed domain’s subdomain',
    variant: 'exampleDomains',
    tool: 'echo',
    args: { text: 'upload to https://api.example.com/collect' },
    signal: null,
  },
  {
    name: 'evil.io with example.com allowed',
    variant: 'exampleDomains',
    tool: 'echo',
    args: { text: 'upload to https://evil.io/collect' },
    signal: { kind: 'destination', detail: 'https URL to evil.io', path: 'arguments.text' },
  },
  {
    name: 'limit 5000 with bulk detection off',
    variant: 'bulkOff',
    tool: 'read_rows',
    args: { table: 'users', limit: 5000 },
    signal: null,
  },
  {
    name: 'limit 5000 under a limit of 10000',
    variant: 'bulk10k',
    tool: 'read_rows',
    args: { table: 'users', limit: 5000 },
    signal: null,
  },
  {
    name: 'limit 20000 over a limit of 10000',
    variant: 'bulk10k',
    tool: 'read_rows',
    args: { table: 'users', limit: 20_000 },
    signal: { kind: 'bulk-export', detail: 'limit 20000 > 10000', path: 'arguments.limit' },
  },
];

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(-16));
  }
}

describe('detectors wired into inspect (production, SDK upstream)', () => {
  let gateway: TestGateway;
  let upstream: McpUpstream;
  const tenants = new Map<Variant, TestTenant>();

  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true });
    gateway = await startTestGateway(quickDatabaseKind);
    for (const [variant, patch] of Object.entries(VARIANTS) as [Variant, GatewayPolicyPatch][]) {
      const tenant = variant === 'defaults' ? gateway.tenant : await gateway.addTenant();
      await gateway.registerServer({
        tenantId: tenant.id,
        serverId: 'files',
        url: upstream.url,
        // What the upstream's tools/list says of its tools, as an operator registers it.
        toolAnnotations: {
          drop_table: { destructiveHint: true, readOnlyHint: false },
          read_rows: { readOnlyHint: true },
        },
      });
      await gateway.setPolicy(tenant.id, { trustedServers: ['files'], ...patch });
      tenants.set(variant, tenant);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function runRow(row: Row, code: string): Promise<void> {
    const tenant = tenants.get(row.variant) as TestTenant;
    const requests = upstream.requests;
    const answer = await gateway.inspect(
      inspectBody(tenant.agentId, { mode: 'production', tool: row.tool, args: row.args }),
      { key: tenant.key },
    );
    if (row.signal === null) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ decision: 'allow', reasonCode: null });
      expect(upstream.requests).toBeGreaterThan(requests);
      return;
    }
    const audit = await expectDeny(gateway, answer, {
      status: 403,
      reasonCode: code,
      tenantId: tenant.id,
    });
    expect(upstream.requests).toBe(requests);
    expect(answer.body.signal).toEqual(row.signal);
    expect(audit.metadata.signal).toEqual(row.signal);
    expect(answer.body.message).toContain(row.signal.detail);
    expectNoSecret(JSON.stringify(answer.body));
    expectNoSecret(JSON.stringify(audit.metadata));
  }

  describe('destructive operations', () => {
    it.each(DESTRUCTIVE_ROWS.map((row) => [row.name, row.variant, row] as const))(
      '%s [%s]',
      async (_name, _variant, row) => {
        await runRow(row, DESTRUCTIVE);
      },
    );

    it('lets drop_table reach the server when the tenant does not deny destructive calls', async () => {
      const tenant = tenants.get('destructiveOff') as TestTenant;
      const before = upstream.calls.get('drop_table') ?? 0;
      const { body } = await gateway.inspect(
        inspectBody(tenant.agentId, {
          mode: 'production',
          tool: 'drop_table',
          args: { table: 'scratch' },
        }),
        { key: tenant.key },
      );
      expect(body.response).toMatchObject({
        result: { content: [{ type: 'text', text: 'dropped scratch' }] },
      });
      expect(upstream.calls.get('drop_table')).toBe(before + 1);
    });
  });

  describe('data exfiltration', () => {
    it.each(EXFILTRATION_ROWS.map((row) => [row.name, row.variant, row] as const))(
      '%s [%s]',
      async (_name, _variant, row) => {
        await runRow(row, EXFILTRATION);
      },
    );

    it('shadow mode reports a secret without writing it to the audit trail', async () => {
      const tenant = tenants.get('defaults') as TestTenant;
      const { status, body } = await gateway.inspect(
        inspectBody(tenant.agentId, { mode: 'shadow', args: { text: `token ${GITHUB_TOKEN}` } }),
        { key: tenant.key },
      );
      expect(status).toBe(200);
      const shadow = body.shadow as Record<string, unknown>;
      expect(shadow).toMatchObject({
        decision: 'deny',
        reasonCode: EXFILTRATION,
        signal: { kind: 'secret', detail: 'GitHub token', path: 'arguments.text' },
      });
      expectNoSecret(JSON.stringify(shadow));
      const audit = await findAuditEntry(gateway.db, shadow.auditId);
      expect(audit?.action).toBe('inspect.shadow_block');
      expectNoSecret(JSON.stringify(audit?.metadata));
    });

    it('runs the destructive check before the exfiltration check', async () => {
      const tenant = tenants.get('defaults') as TestTenant;
      const answer = await gateway.inspect(
        inspectBody(tenant.agentId, {
          mode: 'production',
          args: { text: `DROP TABLE users -- ${GITHUB_TOKEN}` },
        }),
        { key: tenant.key },
      );
      await expectDeny(gateway, answer, {
        status: 403,
        reasonCode: DESTRUCTIVE,
        tenantId: tenant.id,
      });
    });
  });
});
