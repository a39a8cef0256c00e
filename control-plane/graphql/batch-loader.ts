// Loads what many fields of one response ask for with one call (as DataLoader does): every key
// asked for before the event loop moves on joins one batch, which starts once the jobs already
// queued have run (setImmediate), so the sibling fields of a page's entries share it. Nothing is
// cached past its batch: a subscription's next event reads current values.

/** Loads the values of `keys` (distinct); a key absent from the answer has no value. */
export type LoadMany<K, V> = (keys: readonly K[]) => Promise<ReadonlyMap<string, V>>;

/** A function that loads one key through the current batch. */
export type BatchedLoad<K, V> = (key: K) => Promise<V | undefined>;

export function createBatchLoader<K, V>(
  keyOf: (key: K) => string,
  loadMany: LoadMany<K, V>,
): BatchedLoad<K, V> {
  let batch: {
    readonly keys: Map<string, K>;
    readonly values: Promise<ReadonlyMap<string, V>>;
  } | null = null;
  return (key) => {
    if (batch === null) {
      const keys = new Map<string, K>();
      const values = new Promise<ReadonlyMap<string, V>>((resolve, reject) => {
        setImmediate(() => {
          batch = null;
          loadMany([...keys.values()]).then(resolve, reject);
        });
      });
      batch = { keys, values };
    }
    const id = keyOf(key);
    batch.keys.set(id, key);
    return batch.values.then((values) => values.get(id));
  };
}

/**
 * One loader per request: the same context (a request, or a subscription) gets the same loader,
 * made by `make` on first use and dropped with the context.
 */
export function perContext<C extends object, L>(make: (context: C) => L): (context: C) => L {
  const loaders = new WeakMap<C, L>();
  return (context) => {
    let loader = loaders.get(context);
    if (loader === undefined) {
      loader = make(context);
      loaders.set(context, loader);
    }
    return loader;
  };
}
