// MCP servers a tenant registers: where the data plane forwards, and mock results per tool for
// simulation mode. The tool definitions of a server are learnt from its upstream
// (control-plane/tools/refresher.ts); registering a server again keeps what was learnt.
import { randomUUID } from 'node:crypto';
import {
  checkEgress,
  type Egress,
  type EgressRefusal,
  egressHostOf,
} from '../../shared/egress/index.js';
import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import { toStoredDefinitions } from '../../shared/tools/tool-definitions.js';
import { bumpConfigVersion } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';

/** A serverId: the {serverId} of mcp://{serverId}. GraphQL checks it before the resolver runs. */
export const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const SERVER_ID_PROBLEM = 'serverId must be 1-128 letters, digits, . _ or -';

export interface RegisterMcpServerInput {
  readonly tenantId: string;
  readonly serverId: string;
  readonly url: string;
  readonly mockResults?: Readonly<Record<string, unknown>>;
  /**
   * Tool name -> MCP annotations, as the upstream's tools/list would declare them: set when the
   * caller knows them already (tests, imports). Omitted: a new server starts with none and one
   * registered again keeps those learnt.
   */
  readonly toolAnnotations?: Readonly<Record<string, unknown>>;
}

export async function registerMcpServer(
  db: Database,
  input: RegisterMcpServerInput,
): Promise<{ id: string }> {
  if (!SERVER_ID.test(input.serverId)) {
    throw gatewayError('REQUEST_INVALID', {
      problem: SERVER_ID_PROBLEM,
    });
  }
  const url = parseServerUrl(input.url);
  const id = randomUUID();
  const toolAnnotations =
    input.toolAnnotations === undefined
      ? undefined
      : (toStoredDefinitions(
          Object.entries(input.toolAnnotations).map(([name, annotations]) => ({
            name,
            definition: { name, annotations },
          })),
        ) as object);
  const data = {
    url: url.toString(),
    transport: 'streamable-http',
    mockResults: (input.mockResults ?? {}) as object,
    ...(toolAnnotations === undefined ? {} : { toolAnnotations }),
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

function parseServerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw gatewayError('REQUEST_INVALID', { problem: 'url must be an absolute http(s) URL' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw gatewayError('REQUEST_INVALID', { problem: 'url must be an absolute http(s) URL' });
  }
  return url;
}

/**
 * The egress policy's verdict on a server URL at registration (docs/security.md, Egress): the
 * refusal when its literal address, or an address its host name resolves to now, is forbidden;
 * null when it is allowed, when the URL is not one the service accepts (the service refuses it),
 * or when the name does not resolve (registering an unreachable server is allowed; the check at
 * connect time still applies to whatever it resolves to later).
 */
export async function checkServerUrlEgress(
  egress: Egress,
  text: string,
): Promise<EgressRefusal | null> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  try {
    const check = await checkEgress(egress, egressHostOf(url));
    return check.allowed ? null : check.refusal;
  } catch {
    return null;
  }
}

/** The refusal of a forbidden server URL, as a field error on `input.url`. */
export function forbiddenServerUrl(refusal: EgressRefusal): GatewayError {
  return gatewayError(
    'UPSTREAM_ADDRESS_FORBIDDEN',
    { detail: refusal.detail },
    { details: { issues: [{ field: 'input.url', message: refusal.detail }] } },
  );
}

export const MCP_TRANSPORTS = ['streamable-http'] as const;

export interface UpdateMcpServerInput {
  readonly url?: string;
  readonly transport?: string;
  readonly mockResults?: Readonly<Record<string, unknown>>;
}

/** Changes a registered server of the tenant (by its serverId); false when there is none. */
export async function updateMcpServer(
  db: Database,
  tenantId: string,
  serverId: string,
  input: UpdateMcpServerInput,
): Promise<boolean> {
  if (
    input.transport !== undefined &&
    !(MCP_TRANSPORTS as readonly string[]).includes(input.transport)
  ) {
    throw gatewayError('REQUEST_INVALID', {
      problem: `transport must be one of ${MCP_TRANSPORTS.join(', ')}`,
    });
  }
  const data: { url?: string; transport?: string; mockResults?: object } = {};
  if (input.url !== undefined) data.url = parseServerUrl(input.url).toString();
  if (input.transport !== undefined) data.transport = input.transport;
  if (input.mockResults !== undefined) data.mockResults = input.mockResults as object;
  return db.prisma.$transaction(async (tx) => {
    const { count } = await tx.mcpServer.updateMany({ where: { tenantId, serverId }, data });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
}

/** Removes a registered server of the tenant; false when there is none. */
export async function removeMcpServer(
  db: Database,
  tenantId: string,
  serverId: string,
): Promise<boolean> {
  return db.prisma.$transaction(async (tx) => {
    const { count } = await tx.mcpServer.deleteMany({ where: { tenantId, serverId } });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
}
