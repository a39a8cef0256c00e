// same_as_previous: a document equal to the previous published version apart from its number,
// compared in canonical form (layout, key order and comments do not count, every field does).
import { describe, expect, it } from 'vitest';
import { parsePolicy, sameAsPreviousWarning } from '../../../shared/npl/index.js';

const text = (version: string, severity = 'LOW') => `policyName: guard
version: "${version}"
targetAgents: ["*"]
rules:
  - ruleId: block_drop
    action: BLOCK
    condition: "tool.name == 'drop'"
    alertSeverity: ${severity}
`;
const published = (source: string) => {
  const policy = parsePolicy(source);
  return { version: policy.version, document: JSON.parse(JSON.stringify(policy)) as unknown };
};

describe('sameAsPreviousWarning', () => {
  it('warns at the version line of a text that only raised the number', () => {
    const source = text('1.0.1');
    expect(sameAsPreviousWarning(parsePolicy(source), published(text('1.0.0')), source)).toEqual({
      code: 'same_as_previous',
      message:
        'svc://guard@1.0.1 is identical to svc://guard@1.0.0 apart from its version: it changes no rule',
      path: ['version'],
      hint: 'edit the rules before publishing, or keep svc://guard@1.0.0, which decides the same',
      source: { line: 2, column: 10 },
    });
  });

  it('compares documents, not texts: another layout or a JSON object warns too', () => {
    const reordered = `# same rules, other layout
version: 1.0.1
rules: [{ alertSeverity: LOW, condition: "tool.name == 'drop'", action: BLOCK, ruleId: block_drop }]
targetAgents: ['*']
policyName: guard
`;
    const previous = published(text('1.0.0'));
    expect(sameAsPreviousWarning(parsePolicy(reordered), previous, reordered)?.source).toEqual({
      line: 2,
      column: 10,
    });
    const object = JSON.parse(JSON.stringify(parsePolicy(text('1.0.1')))) as object;
    const warning = sameAsPreviousWarning(parsePolicy(object), previous, object);
    expect(warning?.code).toBe('same_as_previous');
    expect(warning).not.toHaveProperty('source');
  });

  it('is null for any other difference, and for the same version', () => {
    const previous = published(text('1.0.0'));
    const changed = text('1.0.1', 'MEDIUM');
    expect(sameAsPreviousWarning(parsePolicy(changed), previous, changed)).toBeNull();
    const described = text('1.0.1').replace('rules:', 'description: now explained\nrules:');
    expect(sameAsPreviousWarning(parsePolicy(described), previous, described)).toBeNull();
    const again = text('1.0.0');
    expect(sameAsPreviousWarning(parsePolicy(again), previous, again)).toBeNull();
  });
});
