// What an empty queue means and how a call gets here, so a first-time operator knows what to set up.
import { Code, Paper, Stack, Text, Title } from '@mantine/core';

const EXAMPLE_RULE = `rules:
  - ruleId: hold_payments
    action: REQUIRE_HUMAN
    condition: "tool.name == 'pay'"
    alertSeverity: MEDIUM`;

export function EmptyQueue() {
  return (
    <Paper withBorder p="lg">
      <Stack gap="sm">
        <Title order={3} size="h4">
          No call is waiting for a decision
        </Title>
        <Text size="sm">
          A call lands here when a rule of a pinned NPL policy with the action{' '}
          <Code>REQUIRE_HUMAN</Code> matches it: the inspect answer is <Code>202</Code> with an
          approval id, and the agent resubmits the same call with that id once it is approved. New
          calls appear here as they are held, without reloading.
        </Text>
        <Code block>{EXAMPLE_RULE}</Code>
        <Text size="sm" c="dimmed">
          Publish and pin such a policy on the Policies screen; docs/npl.md describes the language.
        </Text>
      </Stack>
    </Paper>
  );
}
