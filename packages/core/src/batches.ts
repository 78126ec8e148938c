/** Consecutive slices of at most `size` items: embedding calls, upserts and deletes are all sent this way. */
export function* inBatches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}
