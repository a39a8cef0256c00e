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
