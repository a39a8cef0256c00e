import { describe, expect, it } from 'vitest';
import {
  buildFailClosedPolicy,
  compilePolicy,
  EU_AI_ACT_ART5_PROHIBITED,
  evaluatePolicies,
  evaluatePolicy,
  NATO_PROU_STRICT_FINANCIAL,
  NO_POLICY_DECISION,
  type NplPolicy,
  parsePolicy,
} from '../../../shared/npl/index.js';

function policy(rules: [string, string, string][], targetAgents = ['*'], name = 'test-policy') {
  return compilePolicy(
    parsePolicy({
      version: '1.2.3',
      policyName: name,
      targetAgents,
      rules: rules.map(([ruleId, action, condition]) => ({
        ruleId,
        action,
        condition,
        alertSeverity: action === 'BLOCK' ? 'CRITICAL' : 'LOW',
      })),
    }),
  );
}

describe('one policy (spec: policy-schema.md, deterministic-evaluation.md)', () => {
  const nato = compilePolicy(NATO_PROU_STRICT_FINANCIAL);

  it('blocks destructive tool names with the first rule', () => {
    const d = evaluatePolicy(nato, { tool: { name: 'drop_table', args: { table: 'users' } } });
    expect(d).toEqual({
      matched: true,
      action: 'BLOCK',
      ruleId: 'block_destructive_data_tools',
      reason:
        "Rule block_destructive_data_tools matched: tool.name in ['drop_table', 'delete_user']",
      alertSeverity: 'CRITICAL',
      policyName: 'nato-prou-strict-financial',
      policyVersion: '1.0.0',
      policyUri: 'svc://nato-prou-strict-financial@1.0.0',
    });
  });

  it('requires a human for wire transfers above 10000 and allows smaller ones', () => {
    const big = {
      tool: { name: 'wire_transfer', args: { amount: 25_000 } },
      args: { amount: 25_000 },
    };
    expect(evaluatePolicy(nato, big).action).toBe('REQUIRE_HUMAN');
    const small = { tool: { name: 'wire_transfer' }, args: { amount: 10_000 } };
    expect(evaluatePolicy(nato, small).ruleId).toBe('npl_default_allow');
  });

  it('allows with npl_default_allow, unmatched and LOW, when no rule matches', () => {
    const d = evaluatePolicy(nato, { tool: { name: 'query_positions' } });
    expect(d).toMatchObject({
      matched: false,
      action: 'ALLOW',
      ruleId: 'npl_default_allow',
      alertSeverity: 'LOW',
    });
  });

  it('returns the first matching rule in document order, not the most restrictive one', () => {
    const p = policy([
      ['allow_reads', 'ALLOW', "tool.name == 'read'"],
      ['block_everything', 'BLOCK', 'true'],
    ]);
    expect(evaluatePolicy(p, { tool: { name: 'read' } }).ruleId).toBe('allow_reads');
    expect(evaluatePolicy(p, { tool: { name: 'write' } }).ruleId).toBe('block_everything');
  });

  it('does not evaluate rules for an agent role outside targetAgents', () => {
    const p = policy([['block_all', 'BLOCK', 'true']], ['trader']);
    const d = evaluatePolicy(p, { agentRole: 'auditor' });
    expect(d).toMatchObject({ matched: false, action: 'ALLOW', ruleId: 'npl_agent_not_in_scope' });
    expect(evaluatePolicy(p, { agentRole: 'trader' }).action).toBe('BLOCK');
  });

  it('treats a missing or empty agentRole as in scope, like the reference engine', () => {
    const p = policy([['block_all', 'BLOCK', 'true']], ['trader']);
    expect(evaluatePolicy(p, {}).action).toBe('BLOCK');
    expect(evaluatePolicy(p, { agentRole: '' }).action).toBe('BLOCK');
  });

  it('applies a * target to every agent role', () => {
    const p = policy([['block_all', 'BLOCK', 'true']], ['trader', '*']);
    expect(evaluatePolicy(p, { agentRole: 'anyone' }).action).toBe('BLOCK');
  });

  it('is deterministic: the same input gives the same (shared, frozen) decision', () => {
    const ctx = { tool: { name: 'wire_transfer' }, args: { amount: 25_000 } };
    const a = evaluatePolicy(nato, ctx);
    const b = evaluatePolicy(nato, ctx);
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('does not mutate the context', () => {
    const ctx = { tool: { name: 'drop_table', args: { a: [1, { b: 2 }] } }, args: { amount: 1 } };
    const before = JSON.stringify(ctx);
    evaluatePolicy(nato, ctx);
    expect(JSON.stringify(ctx)).toBe(before);
  });

  it('never throws on a context that is not an object', () => {
    for (const ctx of [null, undefined, 0, 'x', [], true]) {
      expect(evaluatePolicy(nato, ctx as never).ruleId).toBe('npl_default_allow');
    }
  });

  it('fails closed when the context cannot be read (throwing getter)', () => {
    const ctx = Object.defineProperty({}, 'tool', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(evaluatePolicy(nato, ctx)).toMatchObject({
      action: 'BLOCK',
      ruleId: 'npl_evaluation_error',
      alertSeverity: 'CRITICAL',
    });
  });

  it('evaluates the EU AI Act article 5 prohibitions', () => {
    const eu = compilePolicy(EU_AI_ACT_ART5_PROHIBITED);
    const social = {
      args: { actionType: 'EVALUATE_USER_TRUST', metadataSource: 'SOCIAL_BEHAVIOR' },
    };
    expect(evaluatePolicy(eu, social).ruleId).toBe('art5_social_scoring');
    expect(evaluatePolicy(eu, { args: { hasBiometricInference: true } }).ruleId).toBe(
      'art5_biometric_inference',
    );
    expect(evaluatePolicy(eu, { args: { hasBiometricInference: false } }).action).toBe('ALLOW');
    expect(evaluatePolicy(eu, { args: { actionType: 'SEARCH' } }).action).toBe('ALLOW');
  });
});

describe('several policies', () => {
  const allow = policy([['allow_all', 'ALLOW', 'true']], ['*'], 'allow-all');
  const simulate = policy([['sim', 'SIMULATE', 'true']], ['*'], 'simulate-all');
  const human = policy([['human', 'REQUIRE_HUMAN', 'true']], ['*'], 'human-all');
  const block = policy([['block', 'BLOCK', 'true']], ['*'], 'block-all');
  const block2 = policy([['block_too', 'BLOCK', 'true']], ['*'], 'block-too');

  it('returns the most restrictive decision: BLOCK > REQUIRE_HUMAN > SIMULATE > ALLOW', () => {
    expect(evaluatePolicies([allow, simulate], {}).action).toBe('SIMULATE');
    expect(evaluatePolicies([simulate, human, allow], {}).action).toBe('REQUIRE_HUMAN');
    expect(evaluatePolicies([allow, human, block, simulate], {}).action).toBe('BLOCK');
  });

  it('breaks ties in favour of the earlier policy', () => {
    expect(evaluatePolicies([block, block2], {}).policyName).toBe('block-all');
    expect(evaluatePolicies([block2, block], {}).policyName).toBe('block-too');
  });

  it('allows when given no policy', () => {
    expect(evaluatePolicies([], {})).toBe(NO_POLICY_DECISION);
    expect(NO_POLICY_DECISION).toMatchObject({ action: 'ALLOW', ruleId: 'npl_default_allow' });
  });

  it('lets a fail-closed pin block whatever the other policies decide', () => {
    const failed = buildFailClosedPolicy('svc://missing-policy@1.0.0', 'not published');
    const d = evaluatePolicies([allow, failed], { agentRole: 'x' });
    expect(d).toMatchObject({
      matched: true,
      action: 'BLOCK',
      ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
      alertSeverity: 'CRITICAL',
      policyName: 'missing-policy',
      policyVersion: '1.0.0',
      policyUri: 'svc://missing-policy@1.0.0',
    });
  });
});

describe('compilePolicy', () => {
  it('accepts a hand-built document and validates it first', () => {
    const doc: NplPolicy = {
      version: '1.0.0',
      policyName: 'hand-built',
      targetAgents: ['*'],
      rules: [
        { ruleId: 'r', action: 'BLOCK', condition: "tool.name == 'x'", alertSeverity: 'LOW' },
      ],
    };
    expect(evaluatePolicy(compilePolicy(doc), { tool: { name: 'x' } }).action).toBe('BLOCK');
  });

  it('throws NPL_INVALID_CONDITION with the rule index when only a condition is wrong', () => {
    const doc: NplPolicy = {
      version: '1.0.0',
      policyName: 'bad-condition',
      targetAgents: ['*'],
      rules: [
        { ruleId: 'ok', action: 'BLOCK', condition: 'true', alertSeverity: 'LOW' },
        { ruleId: 'bad', action: 'BLOCK', condition: 'tool.name ==', alertSeverity: 'LOW' },
      ],
    };
    expect(() => compilePolicy(doc)).toThrowError(
      expect.objectContaining({
        code: 'NPL_INVALID_CONDITION',
        issues: [expect.objectContaining({ ruleIndex: 1, line: 1, column: 13 })],
      }),
    );
  });

  it('throws NPL_INVALID_DOCUMENT for a structurally invalid document', () => {
    const doc = { version: '1', policyName: 'x', targetAgents: ['*'], rules: [] } as NplPolicy;
    expect(() => compilePolicy(doc)).toThrowError(
      expect.objectContaining({ code: 'NPL_INVALID_DOCUMENT' }),
    );
  });
});
