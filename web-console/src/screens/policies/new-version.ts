// Starting points for a draft: an empty policy to fill in, or a published version's text with its
// patch number raised, since a published name@version never changes.

export const NEW_POLICY_TEMPLATE = `version: "1.0.0"
policyName: my-policy
description: What this policy is for
targetAgents: ["*"]
rules:
  - ruleId: block_destructive_tools
    action: BLOCK
    condition: "tool.name in ['drop_table', 'delete_user']"
    alertSeverity: CRITICAL
`;

const VERSION_LINE = /^(version:\s*["']?)(\d+)\.(\d+)\.(\d+)(["']?\s*)$/m;

/** The source with `version` raised by one patch; unchanged when the line is not found. */
export function nextVersionSource(source: string): string {
  return source.replace(
    VERSION_LINE,
    (_line, head: string, major: string, minor: string, patch: string, tail: string) =>
      `${head}${major}.${minor}.${Number(patch) + 1}${tail}`,
  );
}
