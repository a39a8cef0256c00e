// Who an audit entry is about and who acted, read from what its writer recorded (docs/audit.md):
// the agent (the resource when it is an agent, else `metadata.agentId`), the actor (`actor` or
// an approval's `decidedBy`: `api_key:<id>` for an API caller, an OAuth client's id when
// `actorType` is `oauth_client`, `cli:<command>` for a break-glass command; the agent itself
// when `actorType` is `agent`) and the resource. Only ids are stored: names are looked up when the
// trail is read, so a renamed key shows its current name and the chain never changes. Pure.

/** A subject by kind and id, e.g. `{ kind: 'api_key', id: '…' }`. */
export interface AuditSubjectRef {
  readonly kind: string;
  readonly id: string;
}

/** The kinds whose names the trail's reader looks up (within the entry's tenant). */
export const NAMED_SUBJECT_KINDS = ['agent', 'api_key', 'oauth_client'] as const;
export type NamedSubjectKind = (typeof NAMED_SUBJECT_KINDS)[number];

const NAMED: ReadonlySet<string> = new Set(NAMED_SUBJECT_KINDS);

export function isNamedSubjectKind(kind: string): kind is NamedSubjectKind {
  return NAMED.has(kind);
}

/** The fields of an entry the subjects are read from. */
export interface AuditSubjectSource {
  readonly resourceType: string;
  readonly resourceId: string;
  readonly metadata: unknown;
}

/** The resourceId a deny of a body without an agent records (data-plane/governance/deny.ts). */
const NO_AGENT = 'unknown';
const API_KEY_PREFIX = 'api_key:';

function metadataString(source: AuditSubjectSource, key: string): string | null {
  const metadata = source.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return null;
  const value = (metadata as Record<string, unknown>)[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The agent the entry concerns; null when it names none. */
export function auditEntryAgent(source: AuditSubjectSource): AuditSubjectRef | null {
  if (source.resourceType === 'agent' && source.resourceId !== '') {
    return source.resourceId === NO_AGENT ? null : { kind: 'agent', id: source.resourceId };
  }
  const agentId = metadataString(source, 'agentId');
  return agentId === null ? null : { kind: 'agent', id: agentId };
}

/** Who acted; null when the entry names nobody (the gateway itself, `actorType: system`). */
export function auditEntryActor(source: AuditSubjectSource): AuditSubjectRef | null {
  const actorType = metadataString(source, 'actorType');
  const actor = metadataString(source, 'actor') ?? metadataString(source, 'decidedBy');
  if (actor !== null) {
    if (actor.startsWith(API_KEY_PREFIX)) {
      return { kind: 'api_key', id: actor.slice(API_KEY_PREFIX.length) };
    }
    if (actorType === 'oauth_client') return { kind: 'oauth_client', id: actor };
    const colon = actor.indexOf(':');
    if (colon > 0) return { kind: actor.slice(0, colon), id: actor.slice(colon + 1) };
    return { kind: actorType ?? 'unknown', id: actor };
  }
  if (actorType === 'agent') return auditEntryAgent(source);
  return null;
}

/** The resource as a subject, when it is of a kind with a name. */
export function auditEntryResource(source: AuditSubjectSource): AuditSubjectRef | null {
  if (!isNamedSubjectKind(source.resourceType) || source.resourceId === '') return null;
  if (source.resourceType === 'agent' && source.resourceId === NO_AGENT) return null;
  return { kind: source.resourceType, id: source.resourceId };
}
