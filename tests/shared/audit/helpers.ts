// Builders shared by the audit tests: chains made with chainEntry, their export text, and
// verification of export text through the streaming reader.
import {
  type AuditEntry,
  type AuditEntryInput,
  chainEntry,
  formatAuditExport,
  type JsonObject,
  readAuditExport,
  type VerifyAuditChainOptions,
  type VerifyAuditChainResult,
  verifyAuditChain,
} from '../../../shared/audit/index.js';

export const TENANT = 'ten_acme';
const START = Date.parse('2026-03-01T09:00:00.000Z');

export function entryInput(i: number, overrides: Partial<AuditEntryInput> = {}): AuditEntryInput {
  const metadata: JsonObject = {
    tool: i % 3 === 0 ? 'drop_table' : 'query_positions',
    actorType: 'agent',
    confidence: 0.9,
    regulatoryRelevance: ['DORA'],
    reasonCode: i % 2 === 0 ? 'NPL_POLICY_BLOCK' : 'MCP_METHOD_BLOCKED',
    ruleId: `rule_${i}`,
  };
  return {
    id: `evt_${i}`,
    tenantId: TENANT,
    action: i % 2 === 0 ? 'inspect.denied' : 'inspect.shadow_blocked',
    resourceType: 'agent',
    resourceId: `agt_${i % 7}`,
    createdAt: new Date(START + i * 1000),
    metadata,
    ...overrides,
  };
}

export function buildChain(count: number, tenantId = TENANT): AuditEntry[] {
  const entries: AuditEntry[] = [];
  let prev: string | null = null;
  for (let i = 0; i < count; i++) {
    const entry = chainEntry(entryInput(i, { tenantId }), prev);
    entries.push(entry);
    prev = entry.hash;
  }
  return entries;
}

export async function exportText(entries: Iterable<unknown>): Promise<string> {
  let text = '';
  for await (const chunk of formatAuditExport(entries as Iterable<AuditEntry>)) text += chunk;
  return text;
}

/** Export text of arbitrary values, serialized as they are (for damaged entries). */
export function rawExportText(values: readonly unknown[]): string {
  return values.length === 0
    ? '[]\n'
    : `[\n${values.map((v) => JSON.stringify(v)).join(',\n')}\n]\n`;
}

/** Splits text into chunks of the given byte sizes (cycled), as a stream would deliver it. */
export function chunked(text: string, sizes: readonly number[]): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!);
    chunks.push(bytes.slice(at, at + size));
    at += size;
  }
  return chunks;
}

export function verifyText(
  text: string,
  options?: VerifyAuditChainOptions,
  sizes: readonly number[] = [65536],
): Promise<VerifyAuditChainResult> {
  return verifyAuditChain(readAuditExport(chunked(text, sizes)), options);
}

/** A deep copy of the entries as plain objects, ready to be tampered with. */
export function editable(entries: readonly AuditEntry[]): Record<string, unknown>[] {
  return JSON.parse(JSON.stringify(entries)) as Record<string, unknown>[];
}
