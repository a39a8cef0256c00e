// MCP servers a tenant registers: where the data plane forwards, and mock results per tool for
// simulation mode. The tool definitions of a server are learnt from its upstream
// (control-plane/tools/refresher.ts); registering a server again keeps what was learnt.
// An operator's change (registerMcpServerAsOperator, updateMcpServer, removeMcpServer) is refused
// first when the egress policy forbids its URL (audited as egress.refused, nothing stored), then
// written with the configVersion bump in one transaction and audited; registerMcpServer alone
// writes and bumps only, for seeding. The caller publishes, then has the tools learnt.
import { randomUUID } from 'node:crypto';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import {
  checkEgress,
  type Egress,
  type EgressRefusal,
  egressHostOf,
  egressRefusalEntry,
} from '../../shared/egress/index.js';
import { type GatewayError, gatewayError } from '../../shared/errors/index.js';
import { toStoredDefinitions } from '../../shared/tools/tool-definitions.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';

export interface McpServerServiceDependencies extends OperatorChangeDependencies {
  /** The egress policy and resolver: a server URL it forbids is refused before anything is stored. */
  readonly egress: Egress;
}

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

/** An operator's registration: refused when egress forbids its URL, else audited once stored. */
export async function registerMcpServerAsOperator(
  deps: McpServerServiceDependencies,
  input: RegisterMcpServerInput & OperatorChange,
): Promise<{ id: string }> {
  await refuseForbiddenServerUrl(deps, input, input.serverId, input.url);
  const { id } = await registerMcpServer(deps.db, input);
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.MCP_SERVER_REGISTERED,
    { type: 'mcp_server', id },
    { serverId: input.serverId, url: input.url },
  );
  return { id };
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
async function checkServerUrlEgress(egress: Egress, text: string): Promise<EgressRefusal | null> {
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
function forbiddenServerUrl(refusal: EgressRefusal): GatewayError {
  return gatewayError(
    'UPSTREAM_ADDRESS_FORBIDDEN',
    { detail: refusal.detail },
    { details: { issues: [{ field: 'input.url', message: refusal.detail }] } },
  );
}

/**
 * Refuses, before anything is stored or sent, a URL the egress policy forbids: audited
 * (egress.refused, the operator as actor), then UPSTREAM_ADDRESS_FORBIDDEN on input.url.
 */
async function refuseForbiddenServerUrl(
  deps: McpServerServiceDependencies,
  change: OperatorChange,
  serverId: string,
  url: string,
): Promise<void> {
  const refusal = await checkServerUrlEgress(deps.egress, url);
  if (refusal === null) return;
  await deps.audit.append(
    egressRefusalEntry({
      tenantId: change.tenantId,
      serverId,
      refusal,
      stage: 'registration',
      url,
      actor: { actorType: 'operator', actor: change.actor },
    }),
  );
  throw forbiddenServerUrl(refusal);
}

export const MCP_TRANSPORTS = ['streamable-http'] as const;

/** What an update changes; a field null or absent keeps its value. */
export interface McpServerChanges {
  readonly url?: string | null;
  readonly transport?: string | null;
  readonly mockResults?: Readonly<Record<string, unknown>> | null;
}

/**
 * An operator's change of a registered server of the tenant (by its serverId), audited as
 * mcp_server.updated naming the fields given; a forbidden url is refused as at registration.
 * NOT_FOUND when the tenant has no such server.
 */
export async function updateMcpServer(
  deps: McpServerServiceDependencies,
  input: OperatorChange & { readonly serverId: string; readonly changes: McpServerChanges },
): Promise<void> {
  const { tenantId, serverId, changes } = input;
  if (changes.url) await refuseForbiddenServerUrl(deps, input, serverId, changes.url);
  if (changes.transport && !(MCP_TRANSPORTS as readonly string[]).includes(changes.transport)) {
    throw gatewayError('REQUEST_INVALID', {
      problem: `transport must be one of ${MCP_TRANSPORTS.join(', ')}`,
    });
  }
  const data: { url?: string; transport?: string; mockResults?: object } = {};
  if (changes.url) data.url = parseServerUrl(changes.url).toString();
  if (changes.transport) data.transport = changes.transport;
  if (changes.mockResults) data.mockResults = changes.mockResults as object;
  const updated = await deps.db.prisma.$transaction(async (tx) => {
    const { count } = await tx.mcpServer.updateMany({ where: { tenantId, serverId }, data });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
  if (!updated) {
    throw gatewayError('NOT_FOUND', { resource: `MCP server ${serverId} in this tenant` });
  }
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.MCP_SERVER_UPDATED,
    { type: 'mcp_server', id: serverId },
    {
      serverId,
      fields: Object.keys(changes).filter(
        (field) => changes[field as keyof McpServerChanges] != null,
      ),
    },
  );
}

/**
 * An operator's removal of a registered server of the tenant, audited as mcp_server.removed.
 * NOT_FOUND when the tenant has no such server.
 */
export async function removeMcpServer(
  deps: OperatorChangeDependencies,
  input: OperatorChange & { readonly serverId: string },
): Promise<void> {
  const { tenantId, serverId } = input;
  const removed = await deps.db.prisma.$transaction(async (tx) => {
    const { count } = await tx.mcpServer.deleteMany({ where: { tenantId, serverId } });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
  if (!removed) {
    throw gatewayError('NOT_FOUND', { resource: `MCP server ${serverId} in this tenant` });
  }
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.MCP_SERVER_REMOVED,
    { type: 'mcp_server', id: serverId },
    { serverId },
  );
}
