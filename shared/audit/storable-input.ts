// The audit edge's answer to untrusted text: whatever a request carried (an agent id, a tool
// name, an error message quoting the request) is stored and hashed in the storable encoding of
// shared/text/storable-text.ts, so an entry is never refused for holding NUL or an unpaired
// surrogate and the hash covers exactly the stored strings. Only the fields that may carry
// request data are encoded: resourceId and metadata (values and keys). tenantId, action,
// resourceType and id are chosen by the gateway and stay as they are (a writer refuses them
// when they are not storable, which is a programming error).
import { encodeStorableJson, encodeStorableText } from '../text/storable-text.js';
import type { JsonObject } from './types.js';

/** `input` with resourceId and metadata in the storable encoding; `input` itself when unchanged. */
export function toStorableAuditInput<
  T extends { readonly resourceId: string; readonly metadata?: JsonObject },
>(input: T): T {
  const resourceId =
    typeof input.resourceId === 'string' ? encodeStorableText(input.resourceId) : input.resourceId;
  const metadata = input.metadata === undefined ? undefined : encodeStorableJson(input.metadata);
  if (resourceId === input.resourceId && metadata === input.metadata) return input;
  return { ...input, resourceId, ...(metadata === undefined ? {} : { metadata }) };
}
