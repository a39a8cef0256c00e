// Data planes registered with this control plane (gateway administrators only). Registration and
// the configuration stream come with the separate-process mode; this lists what is registered.
import { SCOPES } from '../../../shared/identity/scopes.js';
import { builder } from '../builder.js';

builder.prismaObject('DataPlane', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    address: t.exposeString('address', { nullable: true }),
    softwareVersion: t.exposeString('softwareVersion', { nullable: true }),
    appliedSnapshotVersion: t.exposeInt('appliedSnapshotVersion', { nullable: true }),
    connectedAt: t.expose('connectedAt', { type: 'DateTime', nullable: true }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('dataPlanes', (t) =>
  t.prismaField({
    type: ['DataPlane'],
    authScopes: { scope: SCOPES.TENANTS_ADMIN },
    resolve: (query, _root, _args, context) =>
      context.db.prisma.dataPlane.findMany({ ...query, orderBy: { name: 'asc' } }),
  }),
);
