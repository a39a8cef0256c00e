// One agent: who it is (keys, parent, persona, prompt), what it may call, how it reaches the
// gateway (credentials, OAuth clients), what its usage limits have counted, what was decided about
// it, and the kill switch; a killed agent shows its kill. Reloaded when agentEvents reports a
// change of this agent.
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconArrowLeft, IconSkull } from '@tabler/icons-react';
import { type ReactNode, useEffect } from 'react';
import { useClient, useQuery } from 'urql';
import { Link } from 'wouter';
import { ErrorAlert } from '../../components/error-alert.tsx';
import { RequireScope } from '../../components/require-scope.tsx';
import { useSession } from '../../session/session.tsx';
import { AgentCredentials, AgentOAuthClients } from './agent-access.tsx';
import { AgentDecisions } from './agent-decisions.tsx';
import { AgentUsage } from './agent-usage.tsx';
import { CopyValue } from './copy-value.tsx';
import { Configuration, HiddenConfiguration } from './hidden-configuration.tsx';
import { KillAgentDialog } from './kill-agent-dialog.tsx';
import { KillAnswerView } from './kill-answer.tsx';
import { type AgentDetail, AgentDetailQuery, AgentEventsSubscription } from './operations.ts';
import { AgentStatusBadge } from './status-badge.tsx';

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={160}>{label}</Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

function Names({ values, none }: { values: readonly string[] | null; none: string }) {
  if (values === null) return <HiddenConfiguration />;
  if (values.length === 0) return <Text size="sm">{none}</Text>;
  return (
    <Group gap={4}>
      {values.map((value) => (
        <Badge key={value} variant="outline" tt="none">
          {value}
        </Badge>
      ))}
    </Group>
  );
}

function AgentFacts({ agent }: { agent: AgentDetail }) {
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }}>
      <Table variant="vertical" layout="fixed" withTableBorder aria-label="Identity">
        <Table.Tbody>
          <Field label="Id">
            <Code>{agent.id}</Code>
          </Field>
          <Field label="Public key">
            <CopyValue value={agent.publicKey} label="public key" short />
          </Field>
          <Field label="DID">
            <CopyValue value={agent.did} label="DID" short />
          </Field>
          <Field label="Parent">
            {agent.parent ? (
              <Anchor component={Link} href={`/${agent.parent.id}`}>
                {agent.parent.name}
              </Anchor>
            ) : (
              'none'
            )}
          </Field>
          <Field label="Created">{new Date(agent.createdAt).toLocaleString()}</Field>
          <Field label="Execution mode">
            <Configuration>{agent.executionMode ?? "tenant's default"}</Configuration>
          </Field>
        </Table.Tbody>
      </Table>
      <Table variant="vertical" layout="fixed" withTableBorder aria-label="Persona">
        <Table.Tbody>
          <Field label="Role">{agent.role}</Field>
          <Field label="Persona tone">
            <Configuration>{agent.personaTone ?? '—'}</Configuration>
          </Field>
          <Field label="Persona language">
            <Configuration>{agent.personaLanguage ?? '—'}</Configuration>
          </Field>
          <Field label="System prompt">
            {agent.systemPrompt === null ? (
              <HiddenConfiguration />
            ) : agent.systemPrompt ? (
              <Code block>{agent.systemPrompt}</Code>
            ) : (
              '—'
            )}
          </Field>
          <Field label="Allowed tools">
            <Names values={agent.allowedTools} none="none: every call is refused" />
          </Field>
          <Field label="MCP audiences">
            <Names values={agent.mcpAudiences} none="none" />
          </Field>
        </Table.Tbody>
      </Table>
    </SimpleGrid>
  );
}

export function AgentDetailPage({ id }: { id: string }) {
  const client = useClient();
  const { consoleClient } = useSession();
  const [result, reexecute] = useQuery({ query: AgentDetailQuery, variables: { id } });
  const [killing, killDialog] = useDisclosure(false);

  useEffect(() => {
    const subscription = client.subscription(AgentEventsSubscription, {}).subscribe((event) => {
      if (event.data?.agentEvents.agentId === id) reexecute({ requestPolicy: 'network-only' });
    });
    // After a dropped socket, events may have been missed: read the agent again.
    const stopReconnect = consoleClient.onReconnect(() =>
      reexecute({ requestPolicy: 'network-only' }),
    );
    return () => {
      subscription.unsubscribe();
      stopReconnect();
    };
  }, [client, consoleClient, id, reexecute]);

  const closeKill = () => {
    killDialog.close();
    reexecute({ requestPolicy: 'network-only' });
  };

  const back = (
    <Anchor component={Link} href="/" size="sm">
      <Group gap={4}>
        <IconArrowLeft size={14} /> All agents
      </Group>
    </Anchor>
  );
  if (result.error)
    return (
      <Stack>
        {back}
        <ErrorAlert error={result.error} />
      </Stack>
    );
  if (!result.data) return <Loader aria-label="Loading the agent" />;
  const agent = result.data.agent;
  if (!agent) {
    return (
      <Stack>
        {back}
        <Alert color="gray" title="No such agent">
          This tenant has no agent with the id <Code>{id}</Code>.
        </Alert>
      </Stack>
    );
  }

  return (
    <Stack gap="lg">
      {back}
      <Group justify="space-between" align="flex-start">
        <Group gap="sm">
          <Title order={2}>{agent.name}</Title>
          <AgentStatusBadge status={agent.status} />
        </Group>
        {agent.status === 'active' ? (
          <RequireScope scope="agents:kill" to="kill this agent (the kill switch)">
            <Button color="red" leftSection={<IconSkull size={16} />} onClick={killDialog.open}>
              Kill agent
            </Button>
          </RequireScope>
        ) : null}
      </Group>
      {agent.status === 'killed' ? (
        <Stack gap="xs">
          <Title order={3}>Kill</Title>
          {agent.kill ? (
            <KillAnswerView kill={agent.kill} />
          ) : (
            <Text size="sm">
              Killed {agent.killedAt ? new Date(agent.killedAt).toLocaleString() : ''}:{' '}
              {agent.killedReason}
            </Text>
          )}
        </Stack>
      ) : null}
      <AgentFacts agent={agent} />
      <AgentUsage agentId={agent.id} />
      <AgentCredentials agent={agent} />
      <AgentOAuthClients clients={result.data.oauthClients.edges} />
      <RequireScope scope="audit:read" to="read this agent's recent decisions">
        {/* Read again when the status changes: a kill adds its entry. */}
        <AgentDecisions key={agent.status} agentId={agent.id} />
      </RequireScope>
      <KillAgentDialog agent={agent} opened={killing} onClose={closeKill} />
    </Stack>
  );
}
