// Splits lists of ids into pages of a bounded size for audit entries that must name every id (a
// kill lists every token, credential, delegation, client and approval it revoked): page k holds
// the k-th slice of every list, so the first entry names the first 1 000 of each and each
// follow-up the next 1 000s. An entry stays a bounded size however much an agent held.

/** Most ids of one kind in one entry. */
export const MAX_IDS_PER_ENTRY = 1000;

/** At least one page; each list keeps its order, an exhausted list is empty on later pages. */
export function pageIds<K extends string>(
  lists: Readonly<Record<K, readonly string[]>>,
  pageSize: number = MAX_IDS_PER_ENTRY,
): Record<K, string[]>[] {
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new RangeError('pageIds: pageSize must be a positive integer');
  }
  const kinds = Object.keys(lists) as K[];
  const longest = Math.max(0, ...kinds.map((kind) => lists[kind].length));
  const pages: Record<K, string[]>[] = [];
  for (let start = 0; start === 0 || start < longest; start += pageSize) {
    const page = {} as Record<K, string[]>;
    for (const kind of kinds) page[kind] = lists[kind].slice(start, start + pageSize);
    pages.push(page);
  }
  return pages;
}
