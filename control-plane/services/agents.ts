// Agents of a tenant (the governed-agent record; spawn, credentials and kill build on it).
// Inputs arrive validated: callers check fields with shared/agents/agent-rules.ts (the GraphQL
// inputs do it through `validate:`), so create and update obey one set of rules. The rule that
// needs the database, audiences naming servers of the tenant, is requireRegisteredAudiences.
// An operator's create or update (the ...AsOperator functions) writes, bumps the configVersion in
// the same transaction and is audited; createAgent and updateAgent alone write and bump only (for
// seeding, as the tests do). The caller publishes.
import { randomUUID } from 'node:crypto';
import { agentDid } from '../../shared/agentiam/dids.js';
import { parseMcpAudience } from '../../shared/agents/agent-rules.js';
import { unknownAgent } from '../../shared/agents/unknown-agent.js';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import { EXECUTION_MODES, type ExecutionMode } from '../../shared/snapshot/index.js';
import { invalidField, requestInvalid } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';
import { bumpConfigVersion } from '../../storage/tables/config-version.js';
import {
  auditOperatorChange,
  type OperatorChange,
  type OperatorChangeDependencies,
} from './operator-audit.js';

export interface CreateAgentInput {
  readonly tenantId: string;
  readonly name: string;
  readonly role?: string;
  readonly systemPrompt?: string;
  readonly personaTone?: string | null;
  readonly personaLanguage?: string | null;
  readonly allowedTools: readonly string[];
  readonly mcpAudiences?: readonly string[];
  /** The agent's Ed25519 public key, as the identity layer encodes it. */
  readonly publicKey: string;
  /** Mode of its MCP proxy calls; null or absent: the tenant's proxyExecutionMode. */
  readonly executionMode?: string | null;
}

/**
 * Refuses an execution mode that is none of production, simulation, shadow (null: the tenant's
 * proxyExecutionMode): REQUEST_INVALID naming `field`.
 */
export function requireExecutionMode(
  mode: string | null | undefined,
  field: string,
): ExecutionMode | null | undefined {
  if (mode === undefined || mode === null) return mode;
  if ((EXECUTION_MODES as readonly string[]).includes(mode)) return mode as ExecutionMode;
  throw invalidField(field, `must be one of ${EXECUTION_MODES.join(', ')}, or null`);
}

/**
 * Refuses audiences (already of the form mcp://{serverId}) that name no MCP server registered in
 * the tenant: REQUEST_INVALID naming each one as `{field}.{index}`.
 */
export async function requireRegisteredAudiences(
  db: Database,
  tenantId: string,
  audiences: readonly string[],
  field: string,
): Promise<void> {
  if (audiences.length === 0) return;
  const serverIds = audiences.map((audience) => parseMcpAudience(audience) ?? '');
  const registered = new Set(
    (
      await db.prisma.mcpServer.findMany({
        where: { tenantId, serverId: { in: serverIds } },
        select: { serverId: true },
      })
    ).map((server) => server.serverId),
  );
  const issues = audiences.flatMap((audience, index) =>
    registered.has(serverIds[index] as string)
      ? []
      : [
          {
            field: `${field}.${index}`,
            message: `names ${audience}, which is not an MCP server registered in this tenant`,
          },
        ],
  );
  if (issues.length > 0) throw requestInvalid(issues);
}

/** Refuses an agent id that names no agent of the tenant: NOT_FOUND with the agent hint. */
export async function requireAgentOfTenant(
  db: Database,
  tenantId: string,
  agentId: string,
): Promise<void> {
  const found = await db.prisma.agent.findFirst({
    where: { id: agentId, tenantId },
    select: { id: true },
  });
  if (!found) throw unknownAgent(agentId);
}

export async function createAgent(db: Database, input: CreateAgentInput): Promise<{ id: string }> {
  const executionMode = requireExecutionMode(input.executionMode, 'executionMode') ?? null;
  const id = randomUUID();
  await db.prisma.$transaction([
    db.prisma.agent.create({
      data: {
        id,
        tenantId: input.tenantId,
        name: input.name,
        role: input.role ?? 'agent',
        systemPrompt: input.systemPrompt ?? '',
        personaTone: input.personaTone ?? null,
        personaLanguage: input.personaLanguage ?? null,
        allowedTools: [...input.allowedTools],
        mcpAudiences: [...(input.mcpAudiences ?? [])],
        publicKey: input.publicKey,
        executionMode,
        // The agent's own identifier is its key's did:key: credentials name it as their subject.
        did: agentDid(input.publicKey),
      },
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return { id };
}

/** An operator's new agent: created as createAgent does, then audited as agent.created. */
export async function createAgentAsOperator(
  deps: OperatorChangeDependencies,
  input: CreateAgentInput & OperatorChange,
): Promise<{ id: string }> {
  const { id } = await createAgent(deps.db, input);
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.AGENT_CREATED,
    { type: 'agent', id },
    { name: input.name, role: input.role ?? 'agent' },
  );
  return { id };
}

export interface UpdateAgentInput {
  readonly role?: string;
  readonly allowedTools?: readonly string[];
  readonly systemPrompt?: string;
  readonly personaTone?: string | null;
  readonly personaLanguage?: string | null;
  /** null: the tenant's proxyExecutionMode. */
  readonly executionMode?: string | null;
}

/** Changes role, allowed tools or persona of an agent of the tenant; false when there is none. */
export async function updateAgent(
  db: Database,
  tenantId: string,
  id: string,
  input: UpdateAgentInput,
): Promise<boolean> {
  const data = Object.fromEntries(
    Object.entries({
      role: input.role,
      allowedTools: input.allowedTools ? [...input.allowedTools] : undefined,
      systemPrompt: input.systemPrompt,
      personaTone: input.personaTone,
      personaLanguage: input.personaLanguage,
      executionMode: requireExecutionMode(input.executionMode, 'executionMode'),
    }).filter(([, value]) => value !== undefined),
  );
  return db.prisma.$transaction(async (tx) => {
    const { count } = await tx.agent.updateMany({ where: { id, tenantId }, data });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
}

/**
 * An operator's change of an agent of the tenant, audited as agent.updated naming the fields of
 * `patch`; NOT_FOUND when the tenant has no such agent (nothing written or audited).
 */
export async function updateAgentAsOperator(
  deps: OperatorChangeDependencies,
  input: OperatorChange & { readonly id: string; readonly patch: UpdateAgentInput },
): Promise<void> {
  if (!(await updateAgent(deps.db, input.tenantId, input.id, input.patch))) {
    throw unknownAgent(input.id);
  }
  await auditOperatorChange(
    deps.audit,
    input,
    AUDIT_ACTIONS.AGENT_UPDATED,
    { type: 'agent', id: input.id },
    { fields: Object.keys(input.patch) },
  );
}
