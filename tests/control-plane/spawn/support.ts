// Spawn tests: a test gateway whose control plane can sign (a master key handed over, as `start`
// does), MCP servers `files` and `mail` registered in its first tenant, a manager API key
// (agents:manage), POST /api/v1/agents/spawn over real HTTP, and the counts that prove a refusal
// wrote nothing.
import { randomBytes } from 'node:crypto';
import type { DatabaseKindUnderTest } from '../../support/databases.js';
import { postAsClient, startTestGateway, type TestGateway } from '../../support/gateway.js';

export const SPAWN_PATH = '/api/v1/agents/spawn';

export interface SpawnAnswer {
  readonly status: number;
  readonly cacheControl: string | null;
  /** The answer's exact text, for counting secrets in it. */
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the assertions check the shape at run time
  readonly body: any;
}

export interface SpawnTestGateway extends TestGateway {
  readonly masterKey: Buffer;
  /** An API key of the first tenant with agents:manage only. */
  readonly managerKey: string;
  spawn(
    body: unknown,
    init?: {
      key?: string | null;
      contentType?: string;
      idempotencyKey?: string;
      headers?: Record<string, string>;
    },
  ): Promise<SpawnAnswer>;
  /** Rows spawn writes, in `tenantId`. */
  countWrites(tenantId: string): Promise<SpawnWrites>;
}

export interface SpawnWrites {
  readonly agents: number;
  readonly credentials: number;
  readonly clients: number;
  readonly idempotencyKeys: number;
  readonly spawnedAudits: number;
}

export async function startSpawnGateway(
  kind: DatabaseKindUnderTest,
  options: { servers?: Record<string, string> } = {},
): Promise<SpawnTestGateway> {
  const gateway = await startTestGateway(kind);
  const masterKey = randomBytes(32);
  gateway.runtime.keyCustody.useMasterKey(masterKey, 'the test master key');
  const servers = options.servers ?? {
    files: 'http://127.0.0.1:9/',
    mail: 'http://127.0.0.1:9/',
  };
  for (const [serverId, url] of Object.entries(servers)) {
    await gateway.registerServer({ tenantId: gateway.tenant.id, serverId, url });
  }
  const managerKey = await gateway.addApiKey(gateway.tenant.id, ['agents:manage']);
  return {
    ...gateway,
    masterKey,
    managerKey,
    async spawn(body, init = {}) {
      const key = init.key === undefined ? managerKey : init.key;
      const response = await postAsClient(`${gateway.url}${SPAWN_PATH}`, body, {
        key,
        contentType: init.contentType,
        headers: {
          ...(init.idempotencyKey === undefined ? {} : { 'idempotency-key': init.idempotencyKey }),
          ...init.headers,
        },
      });
      const text = await response.text();
      return {
        status: response.status,
        cacheControl: response.headers.get('cache-control'),
        text,
        body: JSON.parse(text),
      };
    },
    async countWrites(tenantId) {
      const { prisma } = gateway.db;
      return {
        agents: await prisma.agent.count({ where: { tenantId } }),
        credentials: await prisma.identityCredential.count({ where: { tenantId } }),
        clients: await prisma.oAuthClient.count({ where: { tenantId } }),
        idempotencyKeys: await prisma.spawnIdempotencyKey.count({ where: { tenantId } }),
        spawnedAudits: await prisma.auditEntry.count({
          where: { tenantId, action: 'agent.spawned' },
        }),
      };
    },
  };
}

/** A valid spawn body; override any field (undefined removes it). */
export function spawnBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: `research-${randomBytes(3).toString('hex')}`,
    system_prompt: 'You research and summarize.',
    persona: { tone: 'terse', language: 'en' },
    allowed_tools: ['echo', 'search'],
    mcp_audiences: ['mcp://files', 'mcp://mail'],
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete body[key];
  }
  return body;
}

/** How many times `needle` occurs in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}
