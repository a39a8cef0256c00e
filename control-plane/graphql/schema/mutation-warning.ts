// MutationWarning: something a mutation noticed about a change it stored anyway (a trusted server
// id that names no registered server, say). One type for every mutation that returns warnings, so
// a client reads them the same way everywhere: a `warnings` list on the mutation's payload, empty
// when there is nothing to say.
import { builder } from '../builder.js';

export interface MutationWarning {
  /** Stable code of the finding, e.g. TRUSTED_SERVER_NOT_REGISTERED. */
  readonly code: string;
  readonly message: string;
  /** Path of the input field concerned; null when it concerns no one field. */
  readonly field: string | null;
}

export const MutationWarningRef = builder.objectRef<MutationWarning>('MutationWarning').implement({
  description:
    'A finding about a change the mutation stored anyway: not an error, but most likely not ' +
    'what was meant (docs/graphql.md lists the codes).',
  fields: (t) => ({
    code: t.exposeString('code', {
      description: 'Stable code, e.g. TRUSTED_SERVER_NOT_REGISTERED.',
    }),
    message: t.exposeString('message', { description: 'What was noticed, for people.' }),
    field: t.exposeString('field', {
      nullable: true,
      description: 'Path of the input field concerned, e.g. trustedServers[1]; null for none.',
    }),
  }),
});
