// What publishing the checked draft would warn about in this tenant, asked of the gateway
// (nplPublishPreview) before anything is sent for real: the batch endpoint checks the text alone,
// so it cannot know that the draft only renumbers the policy's previous version
// (same_as_previous). Asked only for a valid draft of a policy that has a published version.
import { useQuery } from 'urql';
import type { PolicyIssue } from './batch-client.ts';
import { PublishPreviewQuery } from './operations.ts';
import type { DraftCheck } from './use-draft-check.ts';
import type { PublishedHashes } from './version-conflict.ts';

/** `name` of svc://name@version. */
function policyNameOf(uri: string): string {
  return uri.slice(uri.indexOf('//') + 2, uri.lastIndexOf('@'));
}

/** The warnings publishing would answer for `check.source`; null until known. */
export function usePublishPreview(
  check: DraftCheck | null,
  published: PublishedHashes,
): readonly PolicyIssue[] | null {
  const uri = check?.item?.valid ? check.item.policyUri : undefined;
  const name = uri === undefined ? null : policyNameOf(uri);
  const asked = name !== null && [...published.keys()].some((key) => policyNameOf(key) === name);
  const source = check?.source ?? '';
  const [result] = useQuery({
    query: PublishPreviewQuery,
    variables: { source },
    pause: !asked,
    requestPolicy: 'network-only',
  });
  if (!asked || result.fetching || result.operation?.variables.source !== source) return null;
  const answer = result.data?.nplPublishPreview;
  return answer?.__typename === 'QueryNplPublishPreviewSuccess' ? answer.data.warnings : null;
}
