// The batch endpoint reads no tenant data, so it cannot know that name@version is already
// published here; the console does. A valid draft whose version exists with other content would
// be refused at publish (a version never changes), so it is an error at its `version:` line now.
import type { BatchItem, PolicyIssue } from './batch-client.ts';

const VERSION_KEY = /^(["']?version["']?\s*:\s*)/m;

/** The published content hash of each svc://name@version of the tenant. */
export type PublishedHashes = ReadonlyMap<string, string>;

export function versionConflict(
  source: string,
  item: BatchItem | null,
  published: PublishedHashes,
): PolicyIssue | null {
  if (!item?.valid || !item.policyUri || !item.contentHash) return null;
  const existing = published.get(item.policyUri);
  if (existing === undefined || existing === item.contentHash) return null;
  const match = VERSION_KEY.exec(source);
  const before = match ? source.slice(0, match.index) : '';
  const line = before.split('\n').length;
  const column = (match?.[1]?.length ?? 0) + 1;
  return {
    code: 'version_published',
    message: `${item.policyUri} is already published with other content`,
    hint: 'raise the version: a published version never changes',
    path: 'version',
    source: match ? { line, column } : null,
  };
}
