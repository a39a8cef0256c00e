import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../storage/engine/database.js';
import { dropSchema, postgresUrl, uniqueSchemaName } from '../../support/databases.js';

describe.skipIf(!postgresUrl)('opening PostgreSQL', () => {
  it('succeeds for every process that opens a new schema at the same moment', async () => {
    const schema = uniqueSchemaName();
    try {
      // `create schema if not exists` racing itself fails one side on pg_namespace's unique index;
      // eight concurrent opens make that race likely, and every one of them must still succeed.
      const opened = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          openDatabase({ url: postgresUrl as string, schema, maxConnections: 1 }),
        ),
      );
      const failures = opened.filter((result) => result.status === 'rejected');
      await Promise.all(
        opened.map((result) => (result.status === 'fulfilled' ? result.value.close() : null)),
      );
      expect(failures).toEqual([]);
    } finally {
      await dropSchema(schema);
    }
  });
});
