// The tenant's audit trail: a relay connection, newest first, filtered by action, agent (the
// entry's resourceId, by id or by name), decision (metadata.decision) and time range; and the
// chain check over a range (the same verifier as `agent-gateway audit verify`); and the stream of
// new entries. Entries record ids only; the names of their agent, actor and resource are read
// when they are asked for, for a whole page (or event) at once and inside the caller's tenant.
import { z } from 'zod';
import {
  type AuditSubjectRef,
  auditEntryActor,
  auditEntryAgent,
  auditEntryResource,
  isNamedSubjectKind,
} from '../../../shared/audit/entry-subjects.js';
import { EVENT_TYPES, mapEvents } from '../../../shared/events/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import { LATEST_CHECKPOINT_SOURCE, verifyTenantTrail } from '../../audit/verify-trail.js';
import {
  agentIdsNamed,
  readSubjectNames,
  searchAgents,
  subjectKey,
} from '../../services/audit-subjects.js';
import { createBatchLoader, perContext } from '../batch-loader.js';
import { builder } from '../builder.js';
import type { GraphQLContext } from '../context.js';
import { timeRangeRule } from '../input-rules.js';

/** A subject as the schema shows it; `name` is given when already read (auditAgents). */
interface AuditSubjectValue extends AuditSubjectRef {
  readonly name?: string | null;
}

/** The names of the subjects a request's entries name, one batch per page or event. */
const subjectNames = perContext((context: GraphQLContext) =>
  createBatchLoader(subjectKey, (refs: readonly AuditSubjectRef[]) =>
    readSubjectNames(context.db, context.caller.tenantId, refs),
  ),
);

const AuditSubject = builder.objectRef<AuditSubjectValue>('AuditSubject').implement({
  description:
    'Who or what an audit entry names: the kind and id it records, and the current name of ' +
    "that agent, API key or OAuth client in the caller's tenant.",
  fields: (t) => ({
    kind: t.exposeString('kind', {
      description:
        'What it is: agent, api_key or oauth_client (these have names); other kinds as ' +
        'recorded, e.g. cli for `cli:admin-key reset`.',
    }),
    id: t.exposeString('id', {
      description:
        "The id the entry records: an agent's or API key's id, an OAuth client_id, a CLI command.",
    }),
    name: t.string({
      nullable: true,
      description:
        "Its current name; null when no agent, API key or OAuth client of the caller's tenant " +
        'has this id (deleted, or never of this tenant) or the kind has no names.',
      resolve: async (subject, _args, context) => {
        if (subject.name !== undefined) return subject.name;
        if (!isNamedSubjectKind(subject.kind)) return null;
        return (await subjectNames(context)(subject)) ?? null;
      },
    }),
  }),
});

/** What the subjects of an entry are read from. */
const SUBJECT_FIELDS = { resourceType: true, resourceId: true, metadata: true } as const;

builder.prismaObject('AuditEntry', {
  description:
    "One entry of the tenant's tamper-evident audit trail: each entry's hash covers the " +
    "previous entry's, so a changed or removed entry breaks the chain (verifyAuditTrail).",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID).' }),
    seq: t.string({
      description: 'Position in the tenant chain, from 1 (a string: it may outgrow Int).',
      select: { seq: true },
      resolve: (entry) => entry.seq.toString(),
    }),
    action: t.exposeString('action', {
      description: 'What happened, e.g. inspect.deny or agent.created (docs/audit.md lists them).',
    }),
    resourceType: t.exposeString('resourceType', {
      description: 'Kind of thing it concerns, e.g. agent, approval or api_key.',
    }),
    resourceId: t.exposeString('resourceId', {
      description: 'Id of that thing (the agent for inspect entries).',
    }),
    metadata: t.expose('metadata', {
      type: 'JSON',
      description: 'Details of the action as a JSON object: decision, reason, actor and so on.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was appended.' }),
    hash: t.exposeString('hash', {
      description: 'SHA-256 hex over this entry and prevHash: the link the next entry carries.',
    }),
    prevHash: t.exposeString('prevHash', {
      description: "The previous entry's hash; 64 zeros for the first entry.",
    }),
    agent: t.field({
      type: AuditSubject,
      nullable: true,
      select: SUBJECT_FIELDS,
      description:
        'The agent the entry concerns: its resource when that is an agent, else ' +
        'metadata.agentId (approvals, credentials, OAuth clients); null when it names none.',
      resolve: (entry) => auditEntryAgent(entry),
    }),
    actor: t.field({
      type: AuditSubject,
      nullable: true,
      select: SUBJECT_FIELDS,
      description:
        'Who acted: the API key of an operator (metadata.actor or decidedBy `api_key:<id>`), ' +
        'the OAuth client (actorType oauth_client), the agent (actorType agent), or a CLI ' +
        'command (`cli:…`); null for the gateway itself (actorType system).',
      resolve: (entry) => auditEntryActor(entry),
    }),
    resourceName: t.string({
      nullable: true,
      select: SUBJECT_FIELDS,
      description:
        "The current name of the resource when it is an agent, API key or OAuth client of the caller's tenant; else null.",
      resolve: async (entry, _args, context) => {
        const resource = auditEntryResource(entry);
        if (resource === null) return null;
        return (await subjectNames(context)(resource)) ?? null;
      },
    }),
  }),
});

interface AuditTrailFilter {
  readonly action?: string | null;
  readonly agentId?: string | number | null;
  readonly agent?: string | null;
  readonly decision?: string | null;
  readonly from?: Date | null;
  readonly to?: Date | null;
}

/**
 * The filter of the auditTrail query and subscription, inside the caller's tenant. `agent` is
 * resolved to the ids it names once, when the query runs or the subscription starts; the text
 * itself is kept among them, so the entries of an agent id no row has any more still match.
 */
async function auditTrailWhere(filter: AuditTrailFilter, context: GraphQLContext) {
  const tenantId = context.caller.tenantId;
  const resource: object[] = [];
  if (filter.agentId) resource.push({ resourceId: String(filter.agentId) });
  const agent = filter.agent?.trim();
  if (agent) {
    const ids = new Set([agent, ...(await agentIdsNamed(context.db, tenantId, agent))]);
    resource.push({ resourceId: { in: [...ids] } });
  }
  return {
    tenantId,
    ...(filter.action ? { action: filter.action } : {}),
    ...(resource.length > 0 ? { AND: resource } : {}),
    ...(filter.decision ? { metadata: { path: ['decision'], equals: filter.decision } } : {}),
    ...(filter.from || filter.to
      ? {
          createdAt: {
            ...(filter.from ? { gte: filter.from } : {}),
            ...(filter.to ? { lt: filter.to } : {}),
          },
        }
      : {}),
  };
}

/** The filters of the auditTrail query and subscription. */
const auditFilterArgs = builder.args((t) => ({
  action: t.string({ description: 'Only entries with exactly this action, e.g. inspect.deny.' }),
  agentId: t.id({ description: "The entry's resourceId (the agent of inspect entries)." }),
  agent: t.string({
    description:
      "An agent's id or name (a name case-insensitive): entries whose resourceId is that agent. " +
      'A name several agents share selects the entries of each; auditAgents lists the choices.',
  }),
  decision: t.string({ description: 'Only entries whose metadata.decision is this, e.g. deny.' }),
  from: t.field({ type: 'DateTime', description: 'Created at or after (inclusive).' }),
  to: t.field({ type: 'DateTime', description: 'Created before (exclusive).' }),
}));

builder.queryField('auditTrail', (t) =>
  t.prismaConnection({
    type: 'AuditEntry',
    cursor: 'id',
    description: "Entries of the caller's tenant, newest first; at most 100 per page.",
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: auditFilterArgs,
    validate: timeRangeRule,
    resolve: async (query, _root, args, context) => {
      return context.db.prisma.auditEntry.findMany({
        ...query,
        where: await auditTrailWhere(args, context),
        orderBy: { seq: 'desc' },
      });
    },
  }),
);

// New entries as they are committed, by this process or any other sharing the database. An event
// only names an entry; the entry is read back with the query's filter inside the caller's tenant,
// so the stream holds exactly what the query would list, and never another tenant's entry.
builder.subscriptionField('auditTrail', (t) =>
  t.prismaField({
    type: 'AuditEntry',
    description: "New entries of the caller's tenant, with the filters of the auditTrail query.",
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: auditFilterArgs,
    validate: timeRangeRule,
    subscribe: async (_root, args, context) => {
      const tenantId = context.caller.tenantId;
      const where = await auditTrailWhere(args, context);
      const action = args.action ?? null;
      return mapEvents(
        context.events.subscribe(
          (event) =>
            event.type === EVENT_TYPES.AUDIT_APPENDED &&
            event.tenantId === tenantId &&
            (action === null || event.entry.action === undefined || event.entry.action === action),
        ),
        async (event) => {
          if (event.type !== EVENT_TYPES.AUDIT_APPENDED) return undefined;
          const row = await context.db.prisma.auditEntry.findFirst({
            where: { ...where, id: event.entry.id },
            select: { id: true },
          });
          return row?.id;
        },
      );
    },
    resolve: (query, id: string, _args, context) =>
      context.db.prisma.auditEntry.findUniqueOrThrow({ ...query, where: { id } }),
  }),
);

/** Suggestions of the audit trail's agent filter: how many the console asks for by default. */
const AUDIT_AGENTS_DEFAULT = 20;

builder.queryField('auditAgents', (t) =>
  t.field({
    type: [AuditSubject],
    description:
      "The tenant's agents whose name contains `search` (case-insensitive) or whose id starts " +
      'with it, by name: the choices of the auditTrail agent filter, for a reader of the ' +
      'trail (audit:read; agents(...) needs agents:manage).',
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: {
      search: t.arg.string({
        description: 'Part of a name, or the start of an id; all when empty.',
      }),
      first: t.arg.int({
        defaultValue: AUDIT_AGENTS_DEFAULT,
        description: `How many, 1-100. Default ${AUDIT_AGENTS_DEFAULT}.`,
        validate: z.int().min(1).max(100).nullish(),
      }),
    },
    resolve: async (_root, args, context) => {
      const agents = await searchAgents(
        context.db,
        context.caller.tenantId,
        args.search ?? '',
        args.first ?? AUDIT_AGENTS_DEFAULT,
      );
      return agents.map((agent) => ({ kind: 'agent', id: agent.id, name: agent.name }));
    },
  }),
);

type AnchorStatus = 'matched' | 'proven' | 'not-reached' | 'failed';

interface CheckpointCheck {
  ok: boolean;
  status: AnchorStatus;
  treeSize: number;
  rootHash: string;
  createdAt: Date;
  signedBy: string | null;
  cosignedBy: readonly string[];
  anchoredEntries: number;
  findings: readonly { code: string; message: string }[];
}

interface Verification {
  ok: boolean;
  count: number;
  head: string | null;
  partial: boolean;
  firstBroken: { index: number; id: string | null; code: string; message: string } | null;
  checkpoint: CheckpointCheck | null;
}

const AnchorStatusRef = builder.enumType('AuditAnchorStatus', {
  description: 'How the checked entries stand against the latest signed checkpoint.',
  values: {
    MATCHED: {
      value: 'matched',
      description: "The root of the trail's first treeSize entries is the checkpoint's root.",
    },
    PROVEN: {
      value: 'proven',
      description:
        "An inclusion proof puts the range's last covered entry in the checkpoint's tree.",
    },
    NOT_REACHED: {
      value: 'not-reached',
      description: 'The range holds no entry the checkpoint covers (all are newer): not failed.',
    },
    FAILED: {
      value: 'failed',
      description: 'The entries are not the history the checkpoint signed: see findings.',
    },
  } as const,
});

const AnchorFindingRef = builder
  .objectRef<CheckpointCheck['findings'][number]>('AuditAnchorFinding')
  .implement({
    description: 'Why the entries do not match the checkpoint.',
    fields: (t) => ({
      code: t.exposeString('code', {
        description: 'A stable code, e.g. AUDIT_CHECKPOINT_ROOT_MISMATCH (docs/audit.md).',
      }),
      message: t.exposeString('message', { description: 'What is wrong, for people.' }),
    }),
  });

const CheckpointCheckRef = builder.objectRef<CheckpointCheck>('AuditCheckpointCheck').implement({
  description:
    "The checked entries against the tenant's latest signed checkpoint (as `agent-gateway audit " +
    'verify --checkpoint` checks an export): a history rewritten after it was cut fails here.',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', { description: 'False when the entries do not match it.' }),
    status: t.field({
      type: AnchorStatusRef,
      description: 'Matched, proven, not reached (a range newer than it) or failed.',
      resolve: (check) => check.status,
    }),
    treeSize: t.exposeInt('treeSize', { description: 'Entries it covers: seq 1..treeSize.' }),
    rootHash: t.exposeString('rootHash', { description: 'Its Merkle tree root, base64.' }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When it was signed.',
      resolve: (check) => check.createdAt,
    }),
    signedBy: t.exposeString('signedBy', {
      nullable: true,
      description: '`<key name>+<key id>` of the audit key whose signature verified; null if none.',
    }),
    cosignedBy: t.exposeStringList('cosignedBy', {
      description: 'The configured witnesses whose cosignature/v1 of it verifies, by name.',
    }),
    anchoredEntries: t.exposeInt('anchoredEntries', {
      description: 'Checked entries (from the first) the checkpoint vouches for.',
    }),
    findings: t.field({
      type: [AnchorFindingRef],
      description: 'What failed, in the order the checks ran; empty when ok.',
      resolve: (check) => check.findings,
    }),
  }),
});

const BrokenEntryRef = builder
  .objectRef<NonNullable<Verification['firstBroken']>>('AuditBrokenEntry')
  .implement({
    description: 'The first entry that fails the chain check, and why.',
    fields: (t) => ({
      index: t.exposeInt('index', { description: '0-based position in the verified range.' }),
      id: t.exposeString('id', {
        nullable: true,
        description: 'Its AuditEntry.id; null when the entry has no readable id.',
      }),
      code: t.exposeString('code', {
        description: 'What is wrong, as a stable code, e.g. AUDIT_HASH_MISMATCH (docs/audit.md).',
      }),
      message: t.exposeString('message', { description: 'What is wrong, for people.' }),
    }),
  });

const VerificationRef = builder.objectRef<Verification>('AuditVerification').implement({
  description: 'The outcome of a chain check.',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', {
      description:
        'True when every entry checked is intact and, once the tenant has a checkpoint, matches it.',
    }),
    count: t.exposeInt('count', { description: 'Entries verified (before the first broken one).' }),
    head: t.exposeString('head', { nullable: true, description: 'Hash of the last entry.' }),
    partial: t.exposeBoolean('partial', {
      description: "True for a range: its first entry's link to earlier entries is taken on trust.",
    }),
    firstBroken: t.field({
      type: BrokenEntryRef,
      nullable: true,
      description: 'The first entry that fails the check; null when ok.',
      resolve: (v) => v.firstBroken,
    }),
    checkpoint: t.field({
      type: CheckpointCheckRef,
      nullable: true,
      description:
        'The entries against the latest signed checkpoint; null before the first, or when the ' +
        'chain is broken (firstBroken says where).',
      resolve: (v) => v.checkpoint,
    }),
  }),
});

builder.queryField('verifyAuditTrail', (t) =>
  t.field({
    type: VerificationRef,
    description: "Checks the hash chain of the tenant's entries in [from, to) (all when omitted).",
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: {
      from: t.arg({ type: 'DateTime', description: 'Start of the range (inclusive).' }),
      to: t.arg({ type: 'DateTime', description: 'End of the range (exclusive).' }),
    },
    validate: timeRangeRule,
    resolve: async (_root, args, context) => {
      const { chain, partial, checkpoint, anchor } = await verifyTenantTrail(context.db, {
        tenantId: context.caller.tenantId,
        from: args.from ?? undefined,
        to: args.to ?? undefined,
        witnessKeys: (context.auditSinks?.sinks ?? []).flatMap((sink) =>
          sink.witnessKey ? [sink.witnessKey] : [],
        ),
      });
      if (!chain.ok) {
        const { index, id, code, message } = chain.firstBroken;
        return {
          ok: false,
          count: chain.count,
          head: null,
          partial,
          firstBroken: { index, id, code, message },
          checkpoint: null,
        };
      }
      const outcome = anchor?.checkpoints.find((c) => c.source === LATEST_CHECKPOINT_SOURCE);
      const check: CheckpointCheck | null =
        checkpoint === null || anchor === null
          ? null
          : {
              ok: anchor.ok,
              status: outcome?.status ?? 'failed',
              treeSize: checkpoint.treeSize,
              rootHash: checkpoint.rootHash,
              createdAt: checkpoint.createdAt,
              signedBy: outcome?.signedBy ?? null,
              cosignedBy: outcome?.cosignedBy ?? [],
              anchoredEntries: anchor.anchoredEntries,
              findings: anchor.findings.map(({ code, message }) => ({ code, message })),
            };
      return {
        ok: check?.ok ?? true,
        count: chain.count,
        head: chain.head,
        partial,
        firstBroken: null,
        checkpoint: check,
      };
    },
  }),
);
