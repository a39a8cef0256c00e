// Conditional GET for the public AgentIAM documents (RFC 9110 §13.1.2): If-None-Match with the
// answer's entity tag (weak comparison, as the RFC requires for GET), or `*`.

/** True when the request's If-None-Match matches `etag`: answer 304 without a body. */
export function notModified(request: { headers: { 'if-none-match'?: string } }, etag: string) {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  const opaque = withoutWeakPrefix(etag);
  // Bounded: a client's list of tags is read only as far as the first 64.
  for (const candidate of header.split(',', 64)) {
    const tag = candidate.trim();
    if (tag === '*' || withoutWeakPrefix(tag) === opaque) return true;
  }
  return false;
}

function withoutWeakPrefix(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
