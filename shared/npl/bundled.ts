// The reference policies every installation ships with, written for this project to the same
// rules as the open specification's bundled policies (same conditions, actions and severities).
import { parsePolicy } from './document.js';
import type { NplPolicy } from './types.js';

export const NATO_PROU_STRICT_FINANCIAL: NplPolicy = parsePolicy({
  version: '1.0.0',
  policyName: 'nato-prou-strict-financial',
  description:
    'Financial agents: destructive data tools are blocked; large wire transfers need a human.',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_destructive_data_tools',
      action: 'BLOCK',
      condition: "tool.name in ['drop_table', 'delete_user']",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'require_human_large_wire_transfer',
      action: 'REQUIRE_HUMAN',
      condition: "tool.name == 'wire_transfer' && args.amount > 10000",
      alertSeverity: 'MEDIUM',
    },
  ],
});

export const EU_AI_ACT_ART5_PROHIBITED: NplPolicy = parsePolicy({
  version: '1.0.0',
  policyName: 'eu-ai-act-art5-prohibited',
  description: 'EU AI Act Article 5 prohibited practices are blocked before they execute.',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'art5_social_scoring',
      action: 'BLOCK',
      condition:
        "args.actionType == 'EVALUATE_USER_TRUST' && args.metadataSource == 'SOCIAL_BEHAVIOR'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'art5_manipulative_urgency',
      action: 'BLOCK',
      condition: "args.actionType == 'GENERATE_UI_PROMPT' && args.urgencyTactic == 'ARTIFICIAL'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'art5_biometric_inference',
      action: 'BLOCK',
      condition: 'args.hasBiometricInference',
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'art5_workplace_emotion_recognition',
      action: 'BLOCK',
      condition: "args.actionType == 'INFER_EMOTION' && args.emotionContext == 'WORKPLACE'",
      alertSeverity: 'CRITICAL',
    },
    {
      ruleId: 'art5_criminal_risk_profiling',
      action: 'BLOCK',
      condition:
        "args.actionType == 'CRIMINAL_RISK_PROFILE' && args.criminalBasedOn == 'PHYSICAL_BEHAVIOR'",
      alertSeverity: 'CRITICAL',
    },
  ],
});

/** Every bundled policy, in a fixed order. */
export const BUNDLED_POLICIES: readonly NplPolicy[] = Object.freeze([
  NATO_PROU_STRICT_FINANCIAL,
  EU_AI_ACT_ART5_PROHIBITED,
]);
