// Every REST route with a body (and the routes whose query is validated), refused the way a user
// meets it over HTTP: a bad body gets its exact status and code, `issues` listing every wrong
// field in plain words, `docs` naming the page that describes the request (a heading that
// exists), and nothing is written — no agent, credential, OAuth client or kill, and no audit
// entry except the one the spec demands for a malformed inspect call (a deny is audited). Then
// what was refused before the body: no Authorization header at all, and an unknown agent in the
// body of credentials/issue, which is its own 404 whatever else the body holds. One gateway.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/errors/index.js';
import { ALL_SCOPES } from '../../shared/identity/scopes.js';
import {
  type SpawnTestGateway,
  spawnBody,
  startSpawnGateway,
} from '../control-plane/spawn/support.js';
import { quickDatabaseKind } from '../data-plane/inspect/support.js';
import { postAsClient } from '../support/gateway.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
type Answer = { status: number; body: any };

interface Writes {
  readonly agents: number;
  readonly credentials: number;
  readonly clients: number;
  readonly kills: number;
  readonly audit: Readonly<Record<string, number>>;
}

interface Refusal {
  readonly name: string;
  readonly method?: 'GET' | 'POST';
  readonly path: () => string;
  readonly body?: unknown;
  readonly status: number;
  /** The registry code; for an RFC 7591 refusal, its `error` string. */
  readonly code: string;
  readonly issues: readonly { field: string; message: string }[];
  readonly docs: string;
  /** Audit entries the refusal must write (action → count); none unless named. */
  readonly audited?: Readonly<Record<string, number>>;
  /** Refused before the API key is read (a URL that matches no route). */
  readonly beforeAuth?: boolean;
}

describe('validation refusals of the REST routes', () => {
  let gateway: SpawnTestGateway;
  let admin: string;
  let agentId: string;
  let agentKey: string;

  beforeAll(async () => {
    gateway = await startSpawnGateway(quickDatabaseKind);
    admin = await gateway.addApiKey(gateway.tenant.id, [...ALL_SCOPES]);
    const spawned = await gateway.spawn(spawnBody({ mcp_audiences: ['mcp://files'] }), {
      key: admin,
    });
    expect(spawned.status).toBe(201);
    agentId = spawned.body.agent.id;
    agentKey = spawned.body.agent.publicKey;
  }, 60_000);
  afterAll(() => gateway?.close());

  async function writes(): Promise<Writes> {
    const { prisma } = gateway.db;
    const where = { tenantId: gateway.tenant.id };
    const audit = await prisma.auditEntry.groupBy({ by: ['action'], where, _count: true });
    return {
      agents: await prisma.agent.count({ where }),
      credentials: await prisma.identityCredential.count({ where }),
      clients: await prisma.oAuthClient.count({ where }),
      kills: await prisma.agentKill.count({ where }),
      audit: Object.fromEntries(audit.map((row) => [row.action, row._count])),
    };
  }

  async function send(
    refusal: Pick<Refusal, 'method' | 'path' | 'body'>,
    key: string | null = admin,
  ): Promise<Answer> {
    const url = `${gateway.url}${refusal.path()}`;
    const response =
      refusal.method === 'GET'
        ? await fetch(url, { headers: key === null ? {} : { authorization: `Bearer ${key}` } })
        : await postAsClient(url, refusal.body ?? {}, { key });
    return { status: response.status, body: await response.json() };
  }

  const anAgent = () => agentId;
  const refusals: Refusal[] = [
    {
      name: 'spawn: every wrong, missing and unknown field',
      path: () => '/api/v1/agents/spawn',
      body: {
        name: '',
        persona: { tone: 'calm' },
        allowed_tools: 'echo',
        mcp_audiences: [],
        ttl_seconds: 59,
        colour: 'red',
      },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        { field: 'name', message: 'must be 1-200 characters, not only spaces' },
        { field: 'system_prompt', message: 'is required' },
        { field: 'persona.language', message: 'is required' },
        { field: 'allowed_tools', message: 'must be an array, not a string' },
        { field: 'mcp_audiences', message: 'must list at least one mcp://{serverId}' },
        { field: 'ttl_seconds', message: 'must be at least 60' },
        {
          field: 'colour',
          message:
            'is not a field of this request (its fields: name, system_prompt, persona, allowed_tools, mcp_audiences, public_key, role, ttl_seconds, parent_agent_id, supervising_user_id)',
        },
      ],
      docs: 'docs/spawn.md#request',
    },
    {
      name: 'credentials/issue: a known agent, every other field wrong',
      path: () => '/api/v1/agentiam/credentials/issue',
      body: { agent_id: '(set below)', supervising_user_id: '', ttl_seconds: 59, colour: 'red' },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        { field: 'supervising_user_id', message: 'must not be empty' },
        { field: 'ttl_seconds', message: 'must be an integer between 60 and 2592000' },
        {
          field: 'colour',
          message:
            'is not a field of this request (its fields: agent_id, supervising_user_id, ttl_seconds)',
        },
      ],
      docs: 'docs/agentiam.md#issue-a-credential',
    },
    {
      name: 'credentials/issue: agent_id missing, ttl_seconds a string',
      path: () => '/api/v1/agentiam/credentials/issue',
      body: { ttl_seconds: '3600' },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        { field: 'agent_id', message: 'is required' },
        {
          field: 'ttl_seconds',
          message: 'must be an integer between 60 and 2592000, not a string',
        },
      ],
      docs: 'docs/agentiam.md#issue-a-credential',
    },
    {
      name: 'delegation/verify: every field wrong, all listed',
      path: () => '/api/v1/agentiam/delegation/verify',
      body: { root_credential: [], delegation_chain: 'links', requested_tool: '' },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        {
          field: 'root_credential',
          message: 'must be a JSON object (the identity credential as issued)',
        },
        {
          field: 'delegation_chain',
          message: 'must be an array of delegation credentials ([] for none)',
        },
        { field: 'requested_tool', message: 'must not be empty' },
      ],
      docs: 'docs/agentiam.md#verifying-a-chain',
    },
    {
      name: 'kill: a blank reason and an unknown field',
      path: () => `/api/v2/infrastructure/agents/${agentKey}/kill`,
      body: { reason: '  ', note: 'x' },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        { field: 'reason', message: 'must not be empty or blank' },
        { field: 'note', message: 'is not a field of this request (its fields: reason)' },
      ],
      docs: 'docs/kill-switch.md#request',
    },
    {
      name: 'kill: no reason',
      path: () => `/api/v2/infrastructure/agents/${agentKey}/kill`,
      body: {},
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [{ field: 'reason', message: 'is required' }],
      docs: 'docs/kill-switch.md#request',
    },
    {
      name: 'compliance batch: wrong item fields and an unknown top-level field',
      path: () => '/api/v1/public/compliance/validate/batch',
      body: { items: [{ policy: 5, tool_calls: 'x' }], extra: 1 },
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [
        { field: 'items.0.policy', message: 'must be YAML/JSON text or an object' },
        { field: 'items.0.tool_calls', message: 'must be an array, not a string' },
        { field: 'extra', message: 'is not a field of this request (its fields: items)' },
      ],
      docs: 'docs/compliance-batch.md#request',
    },
    {
      name: 'oauth/register: an RFC 7591 refusal listing every field',
      path: () => '/oauth/register',
      body: { grant_types: 'client_credentials', redirect_uris: 'https://a.example/cb' },
      status: 400,
      code: 'invalid_client_metadata',
      issues: [
        { field: 'agent_id', message: 'is required' },
        { field: 'grant_types', message: 'must be an array, not a string' },
        { field: 'redirect_uris', message: 'must be an array, not a string' },
      ],
      docs: 'docs/oauth.md#registering-a-client-rfc-7591',
    },
    {
      name: 'inspect: a malformed call, every field listed (a deny, so audited)',
      path: () => '/api/v1/mcp/gateway/inspect',
      body: { agent_id: '', server_id: 5, execution_mode: 'dry-run', request: { jsonrpc: '1.0' } },
      status: 400,
      code: 'MCP_MALFORMED_RPC',
      issues: [
        { field: 'agent_id', message: 'must not be empty' },
        { field: 'execution_id', message: 'is required' },
        { field: 'server_id', message: 'must be a string, not 5' },
        { field: 'tool_name', message: 'is required' },
        {
          field: 'execution_mode',
          message: 'must be one of "production", "simulation", "shadow"',
        },
        { field: 'request.jsonrpc', message: 'must be "2.0"' },
        { field: 'request.id', message: 'is required' },
        { field: 'request.method', message: 'is required' },
      ],
      docs: 'docs/inspect.md#request',
      audited: { 'inspect.deny': 1 },
    },
    {
      name: 'approvals: a wait that is not a number',
      method: 'GET',
      path: () => '/api/v1/mcp/gateway/approvals/apr-1?wait=soon',
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [{ field: 'wait', message: 'must be a number' }],
      docs: 'docs/inspect.md#approvals',
    },
    {
      name: 'audit export: from is not a date-time',
      method: 'GET',
      path: () => '/api/v1/audit/export?from=yesterday',
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [{ field: 'from', message: 'must be an RFC 3339 date-time (2026-11-27T10:00:00Z)' }],
      docs: 'docs/audit-storage.md#exporting',
    },
    {
      name: 'a URL that is not UTF-8: no route, so the table of routes',
      method: 'GET',
      path: () => '/api/v1/mcp/gateway/approvals/%FF',
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [{ field: '(url)', message: 'is not valid percent-encoded UTF-8' }],
      docs: 'README.md#http-api-data-plane',
      beforeAuth: true,
    },
  ];
  for (const route of [
    '/api/v1/agents/spawn',
    '/api/v1/agentiam/credentials/issue',
    '/api/v1/agentiam/delegation/verify',
    '/api/v1/public/compliance/validate/batch',
  ]) {
    const docs = refusals.find((refusal) => refusal.path() === route)?.docs as string;
    refusals.push({
      name: `${route}: a body that is not an object`,
      path: () => route,
      body: [],
      status: 400,
      code: 'REQUEST_INVALID',
      issues: [{ field: '(body)', message: 'must be a JSON object, not an array' }],
      docs,
    });
  }

  it.each(refusals.map((refusal) => [refusal.name, refusal] as const))(
    '%s',
    async (_name, refusal) => {
      const body =
        refusal.name.startsWith('credentials/issue: a known agent') && isRecord(refusal.body)
          ? { ...refusal.body, agent_id: anAgent() }
          : refusal.body;
      const before = await writes();
      const answer = await send({ ...refusal, body });
      expect(answer.status, JSON.stringify(answer.body)).toBe(refusal.status);
      if (refusal.code === 'MCP_MALFORMED_RPC') {
        // An inspect answer is a decision: reasonCode, no `error`.
        expect(answer.body).toMatchObject({ decision: 'deny', reasonCode: refusal.code });
      } else if (refusal.code === refusal.code.toUpperCase()) {
        expect(answer.body).toMatchObject({ error: refusal.code, reasonCode: refusal.code });
      } else {
        expect(answer.body.error).toBe(refusal.code);
      }
      if (answer.body.reasonCode !== undefined) {
        expect(answer.body.hint).toEqual(expect.any(String));
      }
      expect(answer.body.issues).toEqual(refusal.issues);
      expect(answer.body.docs).toBe(refusal.docs);
      // The message says every problem too, one field after the other.
      const message = answer.body.message ?? answer.body.error_description;
      for (const issue of refusal.issues) expect(message).toContain(issue.message);
      const after = await writes();
      const expected = { ...before.audit };
      for (const [action, count] of Object.entries(refusal.audited ?? {})) {
        expected[action] = (expected[action] ?? 0) + count;
      }
      expect({ ...after, audit: after.audit }).toEqual({ ...before, audit: expected });
    },
  );

  it('names docs pages whose headings exist', async () => {
    const pages = new Set(refusals.map((refusal) => refusal.docs));
    for (const page of pages) {
      const [file, anchor] = page.split('#') as [string, string | undefined];
      const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8');
      if (anchor === undefined) continue;
      const anchors = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!));
      expect(anchors, page).toContain(anchor);
    }
  });

  it('no Authorization header: 401 AUTH_INVALID_API_KEY saying the header is missing, on every route', async () => {
    const before = await writes();
    for (const refusal of refusals.filter((r) => !r.path().includes('/public/') && !r.beforeAuth)) {
      const answer = await send(refusal, null);
      expect([refusal.name, answer.status, answer.body.reasonCode]).toEqual([
        refusal.name,
        401,
        'AUTH_INVALID_API_KEY',
      ]);
      expect(answer.body.message).toBe('no API key: the request has no Authorization header');
      expect(answer.body.hint).toBe(ERROR_CODES.AUTH_INVALID_API_KEY.hint);
    }
    const malformed = await send(refusals[0]!, 'not-a-key');
    expect([malformed.status, malformed.body.message]).toEqual([401, 'invalid API key']);
    expect(await writes()).toEqual(before);
  });

  it('credentials/issue: an unknown agent is 404 NOT_FOUND with the agent hint, whatever else is wrong', async () => {
    const before = await writes();
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const body of [
      { agent_id: unknown },
      { agent_id: unknown, ttl_seconds: 59, colour: 'red' },
    ]) {
      const answer = await send({ path: () => '/api/v1/agentiam/credentials/issue', body });
      expect([answer.status, answer.body.reasonCode]).toEqual([404, 'NOT_FOUND']);
      expect(answer.body.message).toBe(`no agent ${unknown} in this tenant`);
      expect(answer.body.hint).toBe(ERROR_CODES.NOT_FOUND.hints.agent);
      expect(answer.body.docs).toBe('docs/agentiam.md#issue-a-credential');
    }
    expect(await writes()).toEqual(before);
  });
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
