// Agents of a tenant (the governed-agent record; spawn, credentials and kill build on it).
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../shared/errors/index.js';
import type { Database } from '../../storage/database.js';
import { bumpConfigVersion } from './config-version.js';

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
  readonly did?: string;
}

export async function createAgent(db: Database, input: CreateAgentInput): Promise<{ id: string }> {
  if (input.name.trim() === '' || input.name.length > 200) {
    throw new GatewayError('REQUEST_INVALID', 'agent name must be 1-200 characters');
  }
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
        did: input.did ?? `did:svc:${input.tenantId}:agent:${id}`,
      },
    }),
    bumpConfigVersion(db.prisma, input.tenantId),
  ]);
  return { id };
}

export interface UpdateAgentInput {
  readonly role?: string;
  readonly allowedTools?: readonly string[];
  readonly systemPrompt?: string;
  readonly personaTone?: string | null;
  readonly personaLanguage?: string | null;
}

/** Changes role, allowed tools or persona of an agent of the tenant; false when there is none. */
export async function updateAgent(
  db: Database,
  tenantId: string,
  id: string,
  input: UpdateAgentInput,
): Promise<boolean> {
  if (input.role !== undefined && (input.role.trim() === '' || input.role.length > 100)) {
    throw new GatewayError('REQUEST_INVALID', 'role must be 1-100 characters');
  }
  if (
    input.allowedTools !== undefined &&
    (input.allowedTools.length > 1000 ||
      input.allowedTools.some((tool) => tool === '' || tool.length > 256))
  ) {
    throw new GatewayError(
      'REQUEST_INVALID',
      'allowedTools must be at most 1000 names of 1-256 characters',
    );
  }
  const data = Object.fromEntries(
    Object.entries({
      role: input.role,
      allowedTools: input.allowedTools ? [...input.allowedTools] : undefined,
      systemPrompt: input.systemPrompt,
      personaTone: input.personaTone,
      personaLanguage: input.personaLanguage,
    }).filter(([, value]) => value !== undefined),
  );
  return db.prisma.$transaction(async (tx) => {
    const { count } = await tx.agent.updateMany({ where: { id, tenantId }, data });
    if (count > 0) await bumpConfigVersion(tx, tenantId);
    return count > 0;
  });
}
