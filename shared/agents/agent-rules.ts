// The rules an agent record's fields obey, in one place: the GraphQL createAgent and updateAgent
// inputs validate with them (`validate:`), and so will spawn. Each rule is a zod schema for one
// field; the input schemas below combine them, so one parse reports every wrong field by name.
// The services that store agents trust their callers to have validated with these rules; the
// one rule that needs the database (an audience names a server registered in the tenant) is
// checked by the caller with the tenant's servers at hand (control-plane/services/agents.ts).
import { z } from 'zod';
import { isEd25519PublicKey } from '../identity/ed25519-multibase.js';
import { isStorableText } from '../text/storable-text.js';

/** PostgreSQL text cannot hold NUL or an unpaired surrogate: such a field is refused by name. */
export const UNSTORABLE_TEXT = 'must not contain NUL (U+0000) or an unpaired surrogate';

/** A string the database stores exactly (see shared/text/storable-text.ts). */
export function storableString() {
  return z.string().refine(isStorableText, UNSTORABLE_TEXT);
}

/** Text that is not only whitespace and at most `max` characters long. */
function nonBlankText(max: number) {
  return z
    .string()
    .max(max, `must be 1-${max} characters`)
    .regex(/\S/, `must be 1-${max} characters, not only spaces`)
    .refine(isStorableText, UNSTORABLE_TEXT);
}

export const AGENT_NAME_MAX = 200;
export const AGENT_ROLE_MAX = 100;
export const AGENT_TOOLS_MAX = 1000;
export const AGENT_TOOL_NAME_MAX = 256;
export const AGENT_AUDIENCES_MAX = 100;

/** `mcp://{serverId}`, serverId as McpServer.serverId: 1-128 of `A-Z a-z 0-9 . _ -`, alphanumeric first. */
const MCP_AUDIENCE = /^mcp:\/\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})$/;

/** The serverId an audience `mcp://{serverId}` names; undefined when it is not of that form. */
export function parseMcpAudience(audience: string): string | undefined {
  return MCP_AUDIENCE.exec(audience)?.[1];
}

export const AGENT_RULES = {
  name: nonBlankText(AGENT_NAME_MAX),
  /** The agent's Ed25519 public key, `z6Mk…` (the method-specific id of a did:key). */
  publicKey: z
    .string()
    .refine(isEd25519PublicKey, 'must be an Ed25519 public key in the z6Mk… form (as in did:key)'),
  role: nonBlankText(AGENT_ROLE_MAX),
  allowedTools: z
    .array(
      z
        .string()
        .min(1, `must be a tool name of 1-${AGENT_TOOL_NAME_MAX} characters`)
        .max(AGENT_TOOL_NAME_MAX, `must be a tool name of 1-${AGENT_TOOL_NAME_MAX} characters`)
        .refine(isStorableText, UNSTORABLE_TEXT),
    )
    .max(AGENT_TOOLS_MAX, `must list at most ${AGENT_TOOLS_MAX} tools`),
  /** MCP servers the agent may obtain tokens for; each must also be registered in the tenant. */
  mcpAudiences: z
    .array(
      z
        .string()
        .refine((audience) => parseMcpAudience(audience) !== undefined, 'must be mcp://{serverId}'),
    )
    .max(AGENT_AUDIENCES_MAX, `must list at most ${AGENT_AUDIENCES_MAX} servers`),
} as const;

/**
 * A new agent. Loose: fields without a rule (persona, prompt) pass through, since a
 * validated input replaces the input. Absent or null optional fields are left to defaults.
 */
export const CREATE_AGENT_RULES = z.looseObject({
  name: AGENT_RULES.name,
  publicKey: AGENT_RULES.publicKey,
  role: AGENT_RULES.role.nullish(),
  allowedTools: AGENT_RULES.allowedTools,
  mcpAudiences: AGENT_RULES.mcpAudiences.nullish(),
});

/** A change to an agent: the same rules, every field optional. */
export const UPDATE_AGENT_RULES = z.looseObject({
  role: AGENT_RULES.role.nullish(),
  allowedTools: AGENT_RULES.allowedTools.nullish(),
});
