export async function mapBounded<TItem, TResult>(
  items: readonly TItem[],
  limit: number,
  task: (item: TItem, index: number) => Promise<TResult>,
): Promise<TResult[]> {
  const results = new Array<TResult>(items.length);
  if (items.length === 1) {
    results[0] = await task(items[0] as TItem, 0);
    return results;
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as TItem, index);
    }
  };
  const workers: Promise<void>[] = [];
  const count = Math.max(1, Math.min(limit, items.length));
  for (let i = 0; i < count; i++) workers.push(worker());
  await Promise.all(workers);
  return results;
}
