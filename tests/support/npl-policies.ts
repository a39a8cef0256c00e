// NPL policy texts more than one test file reads.

/** A YAML policy with one rule of each deciding action (BLOCK, REQUIRE_HUMAN, SIMULATE). */
export const YAML_POLICY = `version: "1.0.0"
policyName: payments-guard
targetAgents: ["*"]
rules:
  - ruleId: block_drop
    action: BLOCK
    condition: "tool.name == 'drop_table'"
    alertSeverity: CRITICAL
  - ruleId: human_large_transfer
    action: REQUIRE_HUMAN
    condition: "tool.name == 'wire_transfer' && args.amount > 10000"
    alertSeverity: MEDIUM
  - ruleId: simulate_in_staging
    action: SIMULATE
    condition: "mode == 'staging' && agentRole == 'tester'"
    alertSeverity: LOW
`;

/** A YAML policy `hold-writes@1.0.0` that holds every call of the tool `write` for a human. */
export const HOLD_POLICY = `policyName: hold-writes
version: 1.0.0
targetAgents: ['*']
rules:
  - ruleId: hold_write
    action: REQUIRE_HUMAN
    condition: "tool.name == 'write'"
    alertSeverity: MEDIUM
`;
