// Tool definitions learnt from an upstream MCP server's `tools/list`, in the form they are stored
// on the server's record (McpServer.toolAnnotations, docs/data-model.md): tool name ->
// `{ annotations, digest }`. `annotations` are the MCP hints the destructive detector reads
// (destructiveHint, readOnlyHint, idempotentHint, openWorldHint, title), kept only when they have
// the type MCP defines, so an upstream cannot grow the record with anything else; `digest` is
// `sha256:` + the SHA-256 of the canonical JSON of the whole definition as the upstream sent it
// (description and schemas included), so a later change of any part of a tool is visible.
// Pure: the control plane's refresher, the data plane's pass-through recording and the snapshot
// builder all read and write this one form.
import { contentHash } from '../json/canonical-json.js';
import { isRecord } from '../json/is-record.js';
import type { ToolAnnotations } from '../snapshot/types.js';

/** One tool of a `tools/list` answer: its name and the whole definition as sent. */
export interface ListedTool {
  readonly name: string;
  readonly definition: Readonly<Record<string, unknown>>;
}

export interface StoredToolDefinition {
  readonly annotations: ToolAnnotations;
  /** Absent only for entries stored before digests were kept; the next refresh adds it. */
  readonly digest?: string;
}

export type StoredToolDefinitions = Readonly<Record<string, StoredToolDefinition>>;

const BOOLEAN_HINTS = ['destructiveHint', 'readOnlyHint', 'idempotentHint', 'openWorldHint'];
/** Longest `title` kept: a display name, not a place for an upstream to store data. */
const MAX_TITLE_LENGTH = 1_000;
/** Most tools stored per server (the upstream client lists at most as many). */
export const MAX_STORED_TOOLS = 10_000;

/** The MCP annotations of a definition, each only when it has the type MCP defines. */
export function annotationsOf(value: unknown): ToolAnnotations {
  if (!isRecord(value)) return {};
  const annotations: Record<string, unknown> = {};
  for (const hint of BOOLEAN_HINTS) {
    if (typeof value[hint] === 'boolean') annotations[hint] = value[hint];
  }
  if (typeof value.title === 'string' && value.title.length <= MAX_TITLE_LENGTH) {
    annotations.title = value.title;
  }
  return annotations as ToolAnnotations;
}

export function toolDefinitionDigest(definition: Readonly<Record<string, unknown>>): string {
  return `sha256:${contentHash(definition)}`;
}

/** The stored form of a list of tools; a name listed twice keeps its last definition. */
export function toStoredDefinitions(tools: readonly ListedTool[]): StoredToolDefinitions {
  const stored: Record<string, StoredToolDefinition> = {};
  for (const tool of tools) {
    stored[tool.name] = {
      annotations: annotationsOf(tool.definition.annotations),
      digest: toolDefinitionDigest(tool.definition),
    };
  }
  return stored;
}

/**
 * The tools of a `tools/list` result (`{ tools: [...] }`), or undefined when it is not one. A
 * tool without a string name, or a tools member that is not an array, makes the whole result
 * unusable: nothing is learnt from a malformed answer.
 */
export function listedToolsOf(result: unknown): ListedTool[] | undefined {
  if (!isRecord(result) || !Array.isArray(result.tools)) return undefined;
  const tools: ListedTool[] = [];
  for (const tool of result.tools as unknown[]) {
    if (!isRecord(tool) || typeof tool.name !== 'string' || tool.name === '') return undefined;
    tools.push({ name: tool.name, definition: tool });
  }
  return tools;
}

/**
 * Reads a stored `toolAnnotations` JSON value back. Anything that is not the stored form is left
 * out (the destructive detector then falls back on the tool's name).
 */
export function readStoredDefinitions(value: unknown): StoredToolDefinitions {
  const stored: Record<string, StoredToolDefinition> = {};
  if (!isRecord(value)) return stored;
  for (const [name, entry] of Object.entries(value)) {
    if (!isRecord(entry)) continue;
    const annotations = annotationsOf(entry.annotations);
    stored[name] =
      typeof entry.digest === 'string' ? { annotations, digest: entry.digest } : { annotations };
  }
  return stored;
}

/** Tool name -> annotations of a stored `toolAnnotations` value, for the snapshot. */
export function readStoredAnnotations(value: unknown): Record<string, ToolAnnotations> {
  const annotations: Record<string, ToolAnnotations> = {};
  for (const [name, entry] of Object.entries(readStoredDefinitions(value))) {
    annotations[name] = entry.annotations;
  }
  return annotations;
}

/** Tool name -> digest of a stored `toolAnnotations` value (entries without one left out). */
export function readStoredDigests(value: unknown): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const [name, entry] of Object.entries(readStoredDefinitions(value))) {
    if (entry.digest !== undefined) digests[name] = entry.digest;
  }
  return digests;
}
