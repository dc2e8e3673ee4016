/**
 * Runs `work` over `items` with at most `limit` running at a time; the results are in input order.
 * (Reading a store of thousands of roles, or running an engine per stack, one at a time is slow and
 * all at once floods the store or the machine.)
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
