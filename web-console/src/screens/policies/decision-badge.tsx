// What an NPL action becomes at inspect (data-plane/governance/pipeline.ts, step 5): the gateway's
// decision and reason code, so "try it" reads like an inspect answer.
import { Badge } from '@mantine/core';
import type { BatchDecision } from './batch-client.ts';

export interface GatewayOutcome {
  readonly decision: 'allow' | 'deny' | 'require_human_approval';
  readonly reasonCode: string | null;
  readonly color: string;
}

export function gatewayOutcome(decision: BatchDecision): GatewayOutcome {
  switch (decision.action) {
    case 'BLOCK':
      return {
        decision: 'deny',
        reasonCode:
          decision.ruleId === 'NPL_REGISTRY_FAIL_CLOSED'
            ? 'NPL_REGISTRY_FAIL_CLOSED'
            : 'NPL_POLICY_BLOCK',
        color: 'red',
      };
    case 'REQUIRE_HUMAN':
      return {
        decision: 'require_human_approval',
        reasonCode: 'NPL_REQUIRE_HUMAN',
        color: 'yellow',
      };
    case 'SIMULATE':
      return { decision: 'allow', reasonCode: null, color: 'blue' };
    default:
      return { decision: 'allow', reasonCode: null, color: 'green' };
  }
}

export function DecisionBadge({ outcome }: { outcome: GatewayOutcome }) {
  return (
    <Badge color={outcome.color} variant="light">
      {outcome.decision}
    </Badge>
  );
}
