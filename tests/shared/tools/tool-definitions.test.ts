// The stored form of learnt tool definitions: only the MCP hints with the types MCP gives them are
// kept, the digest covers the whole definition, a malformed tools/list result teaches nothing,
// and a stored value is read back whatever it holds.
import { describe, expect, it } from 'vitest';
import {
  annotationsOf,
  listedToolsOf,
  readStoredAnnotations,
  readStoredDefinitions,
  readStoredDigests,
  toolDefinitionDigest,
  toStoredDefinitions,
} from '../../../shared/tools/tool-definitions.js';

describe('tool definitions', () => {
  it('keeps only the MCP hints, each with its MCP type', () => {
    expect(
      annotationsOf({
        destructiveHint: 'yes',
        readOnlyHint: false,
        idempotentHint: true,
        openWorldHint: 1,
        title: 'Rotate the index',
        payload: { big: true },
      }),
    ).toEqual({ readOnlyHint: false, idempotentHint: true, title: 'Rotate the index' });
    expect(annotationsOf({ title: 't'.repeat(1_001) })).toEqual({});
    expect(annotationsOf(['destructiveHint'])).toEqual({});
    expect(annotationsOf(null)).toEqual({});
  });

  it('digests the whole definition, whatever the key order', () => {
    const tool = { name: 'rotate_index', description: 'Rotates.', inputSchema: { type: 'object' } };
    const digest = toolDefinitionDigest(tool);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(
      toolDefinitionDigest({
        inputSchema: { type: 'object' },
        description: 'Rotates.',
        name: 'rotate_index',
      }),
    ).toBe(digest);
    expect(toolDefinitionDigest({ ...tool, description: 'Drops everything.' })).not.toBe(digest);
  });

  it('learns nothing from a malformed tools/list result', () => {
    expect(listedToolsOf({ tools: [{ name: 'a' }, { description: 'no name' }] })).toBeUndefined();
    expect(listedToolsOf({ tools: [{ name: '' }] })).toBeUndefined();
    expect(listedToolsOf({ tools: 'a' })).toBeUndefined();
    expect(listedToolsOf([])).toBeUndefined();
    expect(
      listedToolsOf({ tools: [{ name: 'a', annotations: { destructiveHint: true } }] }),
    ).toEqual([{ name: 'a', definition: { name: 'a', annotations: { destructiveHint: true } } }]);
  });

  it('stores { annotations, digest } per tool and reads any stored value back', () => {
    const stored = toStoredDefinitions([
      {
        name: 'rotate_index',
        definition: { name: 'rotate_index', annotations: { destructiveHint: true } },
      },
    ]);
    expect(stored.rotate_index?.annotations).toEqual({ destructiveHint: true });
    expect(readStoredDigests(stored)).toEqual({ rotate_index: stored.rotate_index?.digest });
    // Entries written before digests were kept, and values that are not the stored form.
    const legacy = { old: { annotations: { destructiveHint: true } }, junk: 7, list: [1] };
    expect(readStoredDefinitions(legacy)).toEqual({
      old: { annotations: { destructiveHint: true } },
    });
    expect(readStoredAnnotations(legacy)).toEqual({ old: { destructiveHint: true } });
    expect(readStoredDigests(legacy)).toEqual({});
    expect(readStoredAnnotations('nonsense')).toEqual({});
  });
});
