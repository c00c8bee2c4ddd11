/**
 * Runs one call per item with at most `width` calls in flight, and answers
 * their results in the items' order. Paths that are O(partitions) — up to
 * `Limits.partitionsMax` partitions per topic — use it, so that their time on
 * AWS is about items × call time ÷ width instead of items × call time, while
 * the requests in flight stay bounded (docs/design.md, Raising partitions).
 */
export async function mapBounded<T, R>(items: readonly T[], width: number, call: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!(width >= 1)) throw new Error('mapBounded needs a width of at least 1');
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await call(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** `items` in consecutive slices of at most `size` (BatchGetItem's 100 keys a request). */
export const slices = <T>(items: readonly T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** Calls in flight at once on the O(partitions) admin paths (seek, statistics, purge, subscriptions). */
export const PARTITION_CALLS_IN_FLIGHT = 16;
