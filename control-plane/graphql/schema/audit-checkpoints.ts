// The anchored audit trail in GraphQL, the same as its REST routes (docs/audit.md,
// "Checkpoints"): the tenant's latest signed checkpoint, a cut now, the inclusion and consistency
// proofs, and the audit verifier keys. Everything is the caller's tenant's; scope audit:read.

import { gatewayError } from '../../../shared/errors/index.js';
import { SCOPES } from '../../../shared/identity/scopes.js';
import type { StoredCheckpoint } from '../../../storage/tables/audit-checkpoints.js';
import {
  cosignersOf,
  latestAuditCheckpoint,
  servedNote,
} from '../../../storage/tables/audit-checkpoints.js';
import { auditConsistencyProof, auditInclusionProof } from '../../audit/proofs.js';
import { listAuditSigningKeys } from '../../audit/signing-key.js';
import { readSinkStates, type SinkState } from '../../audit/sinks.js';
import { builder } from '../builder.js';
import type { GraphQLContext } from '../context.js';

const CheckpointRef = builder.objectRef<StoredCheckpoint>('AuditCheckpoint').implement({
  description:
    "A signed checkpoint of the tenant's audit trail: a C2SP tlog-checkpoint (origin, tree size, " +
    'root) in a C2SP signed note, signed by the gateway-wide audit key.',
  fields: (t) => ({
    treeSize: t.exposeInt('treeSize', {
      description: 'Entries it covers: those with seq 1..treeSize.',
    }),
    rootHash: t.exposeString('rootHash', {
      description: 'The RFC 9162 Merkle tree root of those entries, base64.',
    }),
    note: t.string({
      description:
        'The signed note, byte for byte as GET /api/v1/audit/checkpoint serves it (witness ' +
        'cosignatures included): what an auditor keeps and passes to `agent-gateway audit ' +
        'verify --checkpoint`.',
      resolve: (checkpoint) => servedNote(checkpoint),
    }),
    cosignatures: t.exposeString('cosignatures', {
      description:
        "The witnesses' cosignature lines (cosignature/v1) gathered by the witness sink; empty " +
        'when none.',
    }),
    cosignedBy: t.stringList({
      description:
        'The witnesses whose cosignature it carries, by name (each verified with the configured ' +
        'witness key before it was stored).',
      resolve: (checkpoint) => cosignersOf(checkpoint),
    }),
    origin: t.string({
      description: 'Its origin line, `<gateway>/audit/<tenant id>`.',
      resolve: (checkpoint) => checkpoint.note.slice(0, checkpoint.note.indexOf('\n')),
    }),
    verifierKey: t.string({
      description: 'The verifier key of the audit key that signed it, `<name>+<key id>+<key>`.',
      resolve: async (checkpoint, _args, context) => {
        const keys = await listAuditSigningKeys(context.db);
        return keys.find((key) => key.id === checkpoint.keyId)?.verifierKey ?? '';
      },
    }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When it was signed.',
      resolve: (checkpoint) => checkpoint.createdAt,
    }),
  }),
});

interface ProofValue {
  readonly treeSize: number;
  readonly leafIndex?: number;
  readonly first?: number;
  readonly hashes: readonly string[];
}

const ProofRef = builder.objectRef<ProofValue>('AuditProof').implement({
  description: "An RFC 9162 proof of the tenant's audit tree, read from its stored nodes.",
  fields: (t) => ({
    treeSize: t.exposeInt('treeSize', { description: 'The tree the proof leads to.' }),
    leafIndex: t.int({
      nullable: true,
      description: "Inclusion proofs: the entry's 0-based position (seq - 1).",
      resolve: (proof) => proof.leafIndex ?? null,
    }),
    first: t.int({
      nullable: true,
      description: 'Consistency proofs: the smaller tree size.',
      resolve: (proof) => proof.first ?? null,
    }),
    hashes: t.exposeStringList('hashes', {
      description: 'The proof, in RFC 9162 order, each a SHA-256 hash in base64.',
    }),
  }),
});

builder.queryField('auditCheckpoint', (t) =>
  t.field({
    type: CheckpointRef,
    nullable: true,
    description: "The tenant's latest signed audit checkpoint; null before the first.",
    authScopes: { scope: SCOPES.AUDIT_READ },
    resolve: (_root, _args, context) => latestAuditCheckpoint(context.db, context.caller.tenantId),
  }),
);

builder.queryField('auditInclusionProof', (t) =>
  t.field({
    type: ProofRef,
    description:
      "An entry's inclusion proof in the tenant's audit tree of treeSize entries (1 to the " +
      "latest checkpoint's size).",
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: {
      entryId: t.arg.id({ required: true, description: "The entry's id." }),
      treeSize: t.arg.int({ required: true, description: 'The tree size the proof leads to.' }),
    },
    resolve: (_root, args, context) =>
      auditInclusionProof(context.db, context.caller.tenantId, String(args.entryId), args.treeSize),
  }),
);

builder.queryField('auditConsistencyProof', (t) =>
  t.field({
    type: ProofRef,
    description:
      "The consistency proof of the tenant's audit tree from size first to size second " +
      "(1 <= first <= second <= the latest checkpoint's size).",
    authScopes: { scope: SCOPES.AUDIT_READ },
    args: {
      first: t.arg.int({ required: true, description: 'The smaller tree size.' }),
      second: t.arg.int({ required: true, description: 'The larger tree size.' }),
    },
    resolve: (_root, args, context) =>
      auditConsistencyProof(context.db, context.caller.tenantId, args.first, args.second),
  }),
);

builder.queryField('auditVerifierKeys', (t) =>
  t.stringList({
    description:
      'The audit verifier keys, the active one first, then the retired ones (their checkpoints ' +
      'still verify); also public at GET /api/v1/audit/checkpoint/key.',
    authScopes: { scope: SCOPES.AUDIT_READ },
    resolve: async (_root, _args, context) =>
      (await listAuditSigningKeys(context.db)).map((key) => key.verifierKey),
  }),
);

builder.mutationField('cutAuditCheckpoint', (t) =>
  t.field({
    type: CheckpointRef,
    description:
      "Cuts the tenant's audit checkpoint now over every committed entry and answers it (the " +
      'stored one when nothing was appended since).',
    authScopes: { scope: SCOPES.AUDIT_READ },
    resolve: (_root, _args, context: GraphQLContext) => {
      if (context.auditCheckpoints === undefined) {
        throw gatewayError('AUDIT_CHECKPOINT_UNAVAILABLE', {
          reason: 'this process does not cut checkpoints',
        });
      }
      return context.auditCheckpoints.cut(context.caller.tenantId);
    },
  }),
);

const SinkRef = builder.objectRef<SinkState>('AuditSink').implement({
  description:
    'A configured checkpoint sink (AGENT_GATEWAY_AUDIT_SINK_FILE, _SINK_URL, _WITNESS_URL): ' +
    'where checkpoints leave the gateway, and how far it got.',
  fields: (t) => ({
    name: t.exposeString('name', {
      description: '`file:<path>`, `http:<url>` or `witness:<name>`.',
    }),
    kind: t.exposeString('kind', { description: '`file`, `http` or `witness`.' }),
    delivered: t.exposeInt('delivered', {
      description: 'Checkpoints it has received (all tenants).',
    }),
    lastAnchoredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When the newest checkpoint it holds (of any tenant) was cut; null before the first.',
      resolve: (sink) => sink.lastAnchoredAt,
    }),
    backlog: t.exposeInt('backlog', {
      description: "The caller's tenant's checkpoints it has not received yet.",
    }),
    anchoredTreeSize: t.exposeInt('anchoredTreeSize', {
      nullable: true,
      description:
        "The caller's tenant's largest tree size it holds: entries up to this seq are anchored " +
        'there. Null before its first checkpoint of this tenant.',
    }),
    anchoredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the checkpoint of anchoredTreeSize was cut.',
      resolve: (sink) => sink.anchoredAt,
    }),
    lastError: t.exposeString('lastError', {
      nullable: true,
      description: 'Why its last delivery failed; null once one succeeds again.',
    }),
    lastErrorAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its last delivery failed.',
      resolve: (sink) => sink.lastErrorAt,
    }),
  }),
});

builder.queryField('auditSinks', (t) =>
  t.field({
    type: [SinkRef],
    description:
      'The checkpoint sinks this gateway delivers to and their anchoring state (the backlog is ' +
      "the caller's tenant's); empty when none is configured.",
    authScopes: { scope: SCOPES.AUDIT_READ },
    resolve: (_root, _args, context) =>
      readSinkStates(context.db, context.auditSinks?.sinks ?? [], context.caller.tenantId),
  }),
);
