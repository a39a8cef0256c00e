// MCP servers a tenant registers: where the data plane forwards, and mock results per tool for
// simulation mode.
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../shared/errors/index.js';
import type { Database } from '../../storage/database.js';
import { bumpConfigVersion } from './config-version.js';

const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface RegisterMcpServerInput {
  readonly tenantId: string;
  readonly serverId: string;
  readonly url: string;
  readonly mockResults?: Readonly<Record<string, unknown>>;
  readonly toolAnnotations?: Readonly<Record<string, unknown>>;
}

export async function registerMcpServer(
  db: Database,
  input: RegisterMcpServerInput,
): Promise<{ id: string }> {
  if (!SERVER_ID.test(input.serverId)) {
    throw new GatewayError('REQUEST_INVALID', 'serverId must be 1-128 letters, digits, . _ or -');
  }
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new GatewayError('REQUEST_INVALID', 'url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError('REQUEST_INVALID', 'url must be an absolute http(s) URL');
  }
  const id = randomUUID();
  const data = {
    url: url.toString(),
    transport: 'streamable-http',
    mockResults: (input.mockResults ?? {}) as object,
    toolAnnotations: (input.toolAnnotations ?? {}) as object,
  };
  const [server] = await db.prisma.$transaction([
    db.prisma.mcpServer.upsert({
      where: { tenantId_serverId: { tenantId: input.tenantId, serverId: input.serverId } },
      create: { id, tenantId: input.tenantId, serverId: input.serverId, ...data },
      update: data,
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return { id: server.id };
}
