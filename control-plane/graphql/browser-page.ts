// Which requests to /graphql are a person opening it in a browser: those are sent to the console's
// GraphiQL (docs/graphql.md), which signs in with an API key and sends its operations back here.
// yoga's own GraphiQL page stays off: it loads its script from a CDN and runs inline script, so it
// fails offline and under the console's CSP. A navigation is a GET (or HEAD) whose Accept names an
// HTML type and no type a GraphQL answer comes in; every API client names one of those or none
// (curl's `*/*`, fetch's default), so what API clients get does not change.

const HTML_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);
/** What yoga answers in: a request naming any of these is an API client's. */
const ANSWER_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/graphql-response+json',
  'multipart/mixed',
  'text/event-stream',
]);

/** The media types an Accept header names with a non-zero quality (wildcards excluded). */
function namedTypes(accept: string): string[] {
  const named: string[] = [];
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';');
    const refused = parameters.some((parameter) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(parameter));
    if (!refused) named.push(type.trim().toLowerCase());
  }
  return named;
}

/** True for a browser opening /graphql as a page; false for every GraphQL client. */
export function isPageRequest(method: string, accept: string | undefined): boolean {
  if ((method !== 'GET' && method !== 'HEAD') || !accept) return false;
  const named = namedTypes(accept);
  return (
    named.some((type) => HTML_TYPES.has(type)) && !named.some((type) => ANSWER_TYPES.has(type))
  );
}

/** The request URL's query string (with its `?`), or ''. */
export function searchOf(url: string): string {
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start);
}
