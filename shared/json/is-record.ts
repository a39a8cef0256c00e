// Whether a parsed JSON value is an object (not null, not an array), so its fields can be read by
// name. The one definition of this check: body parsers, snapshot builders and MCP answer readers
// all narrow `unknown` with it.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
