import { describe, expect, it } from 'vitest';
import { MAX_TEXT_NESTING } from '../../../shared/npl/document.js';
import { safeParsePolicy } from '../../../shared/npl/index.js';
import { estimateTextNesting } from '../../../shared/npl/text-nesting.js';
import { YAML_POLICY } from '../../support/npl-policies.js';

describe('policy text nesting', () => {
  it.each([
    ['flow sequences', `${'['.repeat(2000)}${']'.repeat(2000)}`],
    ['flow mappings', `${'{a: '.repeat(2000)}1${'}'.repeat(2000)}`],
    ['block sequences', `${'- '.repeat(2000)}x`],
  ])('refuses %s nested thousands deep with an issue, never a crash', (_name, text) => {
    for (let i = 0; i < 5; i++) {
      const result = safeParsePolicy(text);
      expect(result.success).toBe(false);
      if (!result.success) expect(result.error.issues[0]?.code).toBe('limit_exceeded');
    }
  });

  it('still parses ordinary documents, whose nesting is far below the bound', () => {
    const result = safeParsePolicy(
      'version: 1.0.0\npolicyName: p\ntargetAgents: ["*"]\nrules:\n  - ruleId: r\n    action: ALLOW\n    condition: tool.name == "x"\n    alertSeverity: LOW\n',
    );
    expect(result.success).toBe(true);
    expect(MAX_TEXT_NESTING).toBeGreaterThanOrEqual(64);
  });

  it('bounds policy-text nesting from the YAML tokens, ignoring brackets in strings and comments', () => {
    expect(estimateTextNesting(YAML_POLICY, 128)).toBeLessThan(10);
    expect(estimateTextNesting('a: "[[[[[[[[[["\nb: c # [[[[[[[[\n', 128)).toBe(1);
    expect(estimateTextNesting(`${'[ "]", '.repeat(500)}`, 128)).toBe(129);
    expect(estimateTextNesting(`${'- '.repeat(500)}x`, 128)).toBe(129);
  });
});
