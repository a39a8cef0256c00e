// Writes `text/event-stream` events (WHATWG HTML server-sent events). Each `data` line of the
// payload becomes one `data:` field, so any text round-trips through a conforming parser
// (data-plane/upstream/sse-parser.ts reads them on the data plane).

/** One event, ending with the blank line that dispatches it. `id` must not contain a newline. */
export function formatSseEvent(event: string, data: string, id?: string): string {
  if (/[\r\n]/.test(event) || (id !== undefined && /[\r\n]/.test(id))) {
    throw new Error('an SSE event name or id cannot contain a line break');
  }
  let text = `event: ${event}\n`;
  if (id !== undefined) text += `id: ${id}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** A comment line: ignored by parsers, useful to open a stream through buffering proxies. */
export function formatSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
