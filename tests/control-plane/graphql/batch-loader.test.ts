// The per-request batch loader behind the audit trail's names: the loads of one turn (the fields
// of a page's entries, resolved through promise chains) are one call with each key once; a later
// turn is a new call, so nothing stale is served to a long-lived subscription.
import { expect, it } from 'vitest';
import { createBatchLoader, perContext } from '../../../control-plane/graphql/batch-loader.js';

function counting() {
  const calls: string[][] = [];
  const load = createBatchLoader(
    (key: string) => key,
    async (keys: readonly string[]) => {
      calls.push([...keys]);
      return new Map(keys.filter((key) => key !== 'gone').map((key) => [key, key.toUpperCase()]));
    },
  );
  return { calls, load };
}

it('loads the keys of one turn in one call, each key once', async () => {
  const { calls, load } = counting();
  const asked = Array.from({ length: 50 }, async (_, index) => {
    // Each field reaches its load after a few promise jobs, as nested resolvers do.
    for (let i = 0; i < index % 4; i++) await Promise.resolve();
    return load(`k${index % 10}`);
  });
  const values = await Promise.all(asked);
  expect(calls).toHaveLength(1);
  expect(calls[0]).toHaveLength(10);
  expect(values[13]).toBe('K3');
});

it('answers undefined for a key without a value, and starts a new call in a later turn', async () => {
  const { calls, load } = counting();
  expect(await load('gone')).toBeUndefined();
  expect(await load('a')).toBe('A');
  expect(calls).toEqual([['gone'], ['a']]);
});

it('fails every load of a batch whose call fails', async () => {
  const load = createBatchLoader(
    (key: string) => key,
    async () => {
      throw new Error('database down');
    },
  );
  await expect(Promise.all([load('a'), load('b')])).rejects.toThrow('database down');
});

it('keeps one loader per context', () => {
  const loaderOf = perContext((context: { id: number }) => ({ context }));
  const first = { id: 1 };
  expect(loaderOf(first)).toBe(loaderOf(first));
  expect(loaderOf({ id: 2 })).not.toBe(loaderOf(first));
});
