// A path segment as the screens use it (an approval id, an agent id in a pasted link). The router
// has already run decodeURI over the path, which leaves `%` on its own when the link said `%25`:
// decoding again must not throw (a URIError blanked the page), the text then is the id as given,
// and an id nobody has simply shows "not found".
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
