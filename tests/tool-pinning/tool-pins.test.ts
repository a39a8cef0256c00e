// The pinning verdict and the tools/list filter (shared/tools/tool-pins.ts): which tools are held
// in each mode, that a digest from the answer being filtered wins over the recorded one, and that
// filtering removes held tools and nothing else.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keepListedTools, pinVerdict } from '../../shared/tools/tool-pins.js';

const A = 'sha256:a';
const B = 'sha256:b';

describe('pinVerdict', () => {
  it('leaves a tool never seen alone under first_sight, and holds it under approved_only', () => {
    expect(pinVerdict(undefined, 'first_sight')).toBeUndefined();
    expect(pinVerdict(undefined, 'first_sight', A)).toBeUndefined();
    expect(pinVerdict(undefined, 'approved_only')).toBe('not_approved');
    expect(pinVerdict(undefined, 'approved_only', A)).toBe('not_approved');
  });

  it('holds a tool whose observed digest differs from the approved one, in both modes', () => {
    expect(pinVerdict({ approved: A, observed: A }, 'first_sight')).toBeUndefined();
    expect(pinVerdict({ approved: A, observed: B }, 'first_sight')).toBe('changed');
    expect(pinVerdict({ approved: A, observed: B }, 'approved_only')).toBe('changed');
    expect(pinVerdict({ approved: A, observed: A }, 'approved_only')).toBeUndefined();
  });

  it('holds a never-approved pin only under approved_only', () => {
    expect(pinVerdict({ approved: null, observed: A }, 'approved_only')).toBe('not_approved');
    expect(pinVerdict({ approved: null, observed: A }, 'first_sight')).toBeUndefined();
  });

  it('judges by the listed digest before the database caught up, a revert included', () => {
    expect(pinVerdict({ approved: A, observed: A }, 'first_sight', B)).toBe('changed');
    expect(pinVerdict({ approved: A, observed: B }, 'first_sight', A)).toBeUndefined();
  });
});

describe('keepListedTools', () => {
  it('removes held tools and keeps the cursor, _meta and the other tools as they are', () => {
    const kept = { name: 'read', description: 'r', annotations: { readOnlyHint: true } };
    const result = {
      tools: [kept, { name: 'drop', description: 'd' }],
      nextCursor: 'c2',
      _meta: { page: 1 },
    };
    const filtered = keepListedTools(result, (name) => name !== 'drop');
    expect(filtered).toEqual({ tools: [kept], nextCursor: 'c2', _meta: { page: 1 } });
    expect(filtered.tools[0]).toBe(kept);
    expect(result.tools).toHaveLength(2);
  });

  it('returns the result itself when nothing is held or it is no tools/list result', () => {
    const result = { tools: [{ name: 'a' }] };
    expect(keepListedTools(result, () => true)).toBe(result);
    const other = { contents: [] };
    expect(keepListedTools(other, () => false)).toBe(other);
  });

  it('only ever removes held tools, in order, and changes no other field', () => {
    const tool = fc.record(
      {
        name: fc.string({ maxLength: 8 }),
        description: fc.string(),
        annotations: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue()),
      },
      { requiredKeys: ['name'] },
    );
    fc.assert(
      fc.property(
        fc.array(tool, { maxLength: 20 }),
        fc.dictionary(
          fc.string({ maxLength: 8 }).filter((key) => key !== 'tools' && key !== '__proto__'),
          fc.jsonValue(),
        ),
        fc.func(fc.boolean()),
        (tools, rest, holds) => {
          const result = { ...rest, tools };
          const snapshot = structuredClone(result);
          const filtered = keepListedTools(result, (name) => !holds(name));
          expect(result).toEqual(snapshot);
          const { tools: keptTools, ...others } = filtered;
          expect(others).toEqual(rest);
          expect(keptTools).toEqual(tools.filter((item) => !holds(item.name)));
        },
      ),
    );
  });
});
