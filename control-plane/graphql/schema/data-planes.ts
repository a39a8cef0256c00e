// Data planes registered with this control plane (gateway administrators only). Registration and
// the configuration stream come with the separate-process mode; this lists what is registered.
import { SCOPES } from '../../../shared/identity/scopes.js';
import { builder } from '../builder.js';

builder.prismaObject('DataPlane', {
  description:
    'A data plane registered with this control plane: a separate process that enforces the ' +
    'configuration it receives on the config stream.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id (UUID).' }),
    name: t.exposeString('name', { description: 'Unique name given at registration.' }),
    address: t.exposeString('address', {
      nullable: true,
      description: 'Network address it last connected from, or null.',
    }),
    softwareVersion: t.exposeString('softwareVersion', {
      nullable: true,
      description: 'Gateway version it reported when it last connected, or null.',
    }),
    appliedSnapshotVersion: t.exposeInt('appliedSnapshotVersion', {
      nullable: true,
      description: 'Version of the configuration snapshot it last reported applied, or null.',
    }),
    connectedAt: t.expose('connectedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When its current or last stream connected; null if never.',
    }),
    lastSeenAt: t.expose('lastSeenAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was last heard from (heartbeats); null if never.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was registered.' }),
    revokedAt: t.expose('revokedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When its credential was revoked (its stream is closed); null while active.',
    }),
  }),
});

builder.queryField('dataPlanes', (t) =>
  t.prismaField({
    type: ['DataPlane'],
    description: 'Every registered data plane, by name (gateway administrators).',
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.dataPlane.findMany({ ...query, orderBy: { name: 'asc' } }),
  }),
);
