import { describe, expect, it } from 'vitest';
import {
  contentHash,
  NplError,
  type NplIssue,
  parsePolicy,
  safeParsePolicy,
} from '../../../shared/npl/index.js';

function issues(source: string | object): NplIssue[] {
  const result = safeParsePolicy(source);
  if (result.success) throw new Error('expected the document to be rejected');
  expect(result.error).toBeInstanceOf(NplError);
  expect(result.error.code).toBe('NPL_INVALID_DOCUMENT');
  return [...result.error.issues];
}

const VALID_YAML = `version: "1.0.0"
policyName: institutional-financial-controls
description: Reference financial agent controls
targetAgents: ["*"]
rules:
  - ruleId: block_destructive_tools
    action: BLOCK
    condition: "tool.name in ['drop_table', 'delete_user']"
    alertSeverity: CRITICAL
`;

describe('policy documents', () => {
  it('parses the specification example from YAML', () => {
    const policy = parsePolicy(VALID_YAML);
    expect(policy).toEqual({
      version: '1.0.0',
      policyName: 'institutional-financial-controls',
      description: 'Reference financial agent controls',
      targetAgents: ['*'],
      rules: [
        {
          ruleId: 'block_destructive_tools',
          action: 'BLOCK',
          condition: "tool.name in ['drop_table', 'delete_user']",
          alertSeverity: 'CRITICAL',
        },
      ],
    });
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.rules[0])).toBe(true);
  });

  it('parses the same document from JSON text and from an object, with the same hash', () => {
    const fromYaml = parsePolicy(VALID_YAML);
    const fromJson = parsePolicy(JSON.stringify(fromYaml, null, 2));
    const fromObject = parsePolicy(JSON.parse(JSON.stringify(fromYaml)));
    expect(fromJson).toEqual(fromYaml);
    expect(contentHash(fromObject)).toBe(contentHash(fromYaml));
  });

  it('reports every problem at once, each with a JSON path and source position', () => {
    const found = issues(`version: 1.0
policyName: Bad_Name
owner: someone
targetAgents: []
rules:
  - ruleId: a
    action: DENY
    condition: "tool.name == 'x'"
    alertSeverity: HIGH
    note: extra
  - ruleId: a
    action: BLOCK
    condition: "tool.nme == 'x' && nope"
    alertSeverity: LOW
  - 42
`);
    expect(found.map((i) => [i.code, i.path.join('.')])).toEqual([
      ['unknown_field', 'owner'],
      ['invalid_type', 'version'],
      ['invalid_value', 'policyName'],
      ['empty_list', 'targetAgents'],
      ['unknown_field', 'rules.0.note'],
      ['invalid_value', 'rules.0.action'],
      ['invalid_value', 'rules.0.alertSeverity'],
      ['duplicate_rule_id', 'rules.1.ruleId'],
      ['unknown_identifier', 'rules.1.condition'],
      ['invalid_type', 'rules.2'],
    ]);
    expect(found[0]?.source).toEqual({ line: 3, column: 1 });
    const condition = found.find((i) => i.code === 'unknown_identifier');
    expect(condition).toMatchObject({
      ruleIndex: 1,
      line: 1,
      column: 20,
      source: { line: 13, column: 36 },
    });
    expect(condition?.excerpt).toBe("tool.nme == 'x' && nope\n                   ^");
  });

  it('requires every mandatory field', () => {
    expect(issues({}).map((i) => i.message)).toEqual([
      'version is required',
      'policyName is required',
      'targetAgents is required',
      'rules is required',
    ]);
    expect(
      issues({ version: '1.0.0', policyName: 'p', targetAgents: ['*'], rules: [{}] }).map(
        (i) => i.code,
      ),
    ).toEqual(['missing_field', 'missing_field', 'missing_field', 'missing_field']);
  });

  it('requires a semantic version and a kebab-case name', () => {
    const base = {
      targetAgents: ['*'],
      rules: [{ ruleId: 'r', action: 'BLOCK', condition: 'true', alertSeverity: 'LOW' }],
    };
    for (const version of ['1.0', '01.0.0', 'v1.0.0', '1.0.0.0']) {
      expect(issues({ ...base, version, policyName: 'ok' })[0]?.path).toEqual(['version']);
    }
    for (const policyName of ['Upper', 'under_score', '-lead', 'double--hyphen', '']) {
      expect(issues({ ...base, version: '1.0.0', policyName })[0]?.path).toEqual(['policyName']);
    }
  });

  it('rejects empty rules, empty conditions and non-object documents', () => {
    expect(
      issues({ version: '1.0.0', policyName: 'p', targetAgents: ['*'], rules: [] })[0]?.code,
    ).toBe('empty_list');
    expect(issues('[1, 2]')[0]?.code).toBe('invalid_type');
    expect(issues('')[0]?.code).toBe('invalid_type');
  });

  it('reports YAML syntax errors and duplicate keys with their position', () => {
    expect(issues('version: "1.0.0"\nversion: "1.0.1"\n')[0]).toMatchObject({
      code: 'syntax',
      source: { line: 2 },
    });
    expect(issues('rules: [\n')[0]?.code).toBe('syntax');
  });

  it('throws NplError from parsePolicy', () => {
    expect(() => parsePolicy('x: 1')).toThrowError(NplError);
  });
});

const ALWAYS_FALSE_YAML = `version: "1.0.0"
policyName: amount-guard
targetAgents: ["*"]
rules:
  - ruleId: block_destructive_tools
    action: BLOCK
    condition: "tool.name == 'drop_table'"
    alertSeverity: CRITICAL
  - ruleId: block_big
    action: BLOCK
    condition: |-
      tool.name == 'pay' &&
        args.amount > 'lots'
    alertSeverity: CRITICAL
`;

describe('warnings', () => {
  it('accepts an ordering against a non-numeric string and warns where it is', () => {
    const result = safeParsePolicy(ALWAYS_FALSE_YAML);
    expect(result.success).toBe(true);
    expect(result.warnings).toEqual([
      {
        code: 'always_false',
        message: "> compares numbers, and 'lots' is not a number: always false",
        path: ['rules', 1, 'condition'],
        hint: 'use == or a string method for text',
        ruleIndex: 1,
        line: 2,
        column: 17,
        excerpt: "  args.amount > 'lots'\n                ^",
        source: { line: 11, column: 16 },
      },
    ]);
    expect(parsePolicy(ALWAYS_FALSE_YAML).rules).toHaveLength(2);
  });

  it('has no source position for a document given as an object, and none when clean', () => {
    const object = parsePolicy(ALWAYS_FALSE_YAML);
    const result = safeParsePolicy(JSON.parse(JSON.stringify(object)));
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).not.toHaveProperty('source');
    expect(safeParsePolicy(VALID_YAML).warnings).toEqual([]);
  });

  it('comes back beside the errors of an invalid document', () => {
    const result = safeParsePolicy({
      version: '1.0.0',
      policyName: 'p',
      targetAgents: ['*'],
      rules: [
        { ruleId: 'a', action: 'BLOCK', condition: "args.n < 'x'", alertSeverity: 'LOW' },
        { ruleId: 'b', action: 'NOPE', condition: 'true', alertSeverity: 'LOW' },
      ],
    });
    expect(result.success).toBe(false);
    expect(result.warnings.map((w) => [w.code, w.ruleIndex])).toEqual([['always_false', 0]]);
  });
});
