// Spawning an agent from the console: the form of spawnAgent (name, role, system prompt, persona,
// allowed tools, MCP audiences, optional parent), the API's refusals at their fields, then the
// secrets of the answer shown once. Closing the drawer forgets the form and the secrets alike.
import {
  Button,
  Drawer,
  Group,
  Select,
  Stack,
  TagsInput,
  Textarea,
  TextInput,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { apiProblem, ErrorAlert } from '../../components/error-alert.tsx';
import { useSession } from '../../session/session.tsx';
import {
  type AgentRow,
  McpServerIdsQuery,
  SpawnAgentMutation,
  type SpawnAnswer,
} from './operations.ts';
import { spawnFieldErrors } from './spawn-field-errors.ts';
import { SpawnSecrets } from './spawn-secrets.tsx';

interface SpawnForm {
  name: string;
  role: string;
  systemPrompt: string;
  tone: string;
  language: string;
  allowedTools: string[];
  mcpAudiences: string[];
  parentAgentId: string | null;
}

const EMPTY_FORM: SpawnForm = {
  name: '',
  role: '',
  systemPrompt: '',
  tone: '',
  language: 'en',
  allowedTools: [],
  mcpAudiences: [],
  parentAgentId: null,
};

/** One key per filled-in form: a double submit or a retry after a lost answer spawns once. */
function newIdempotencyKey(): string | undefined {
  return globalThis.crypto?.randomUUID?.();
}

function SpawnAgentForm({
  parents,
  onSpawned,
}: {
  parents: readonly AgentRow[];
  onSpawned(answer: SpawnAnswer): void;
}) {
  const { hasScope } = useSession();
  const [form, setForm] = useState<SpawnForm>(EMPTY_FORM);
  const [idempotencyKey] = useState(newIdempotencyKey);
  const [spawnResult, spawn] = useMutation(SpawnAgentMutation);
  // Registered servers suggest audiences; listing them needs policies:manage, typing does not.
  const [servers] = useQuery({ query: McpServerIdsQuery, pause: !hasScope('policies:manage') });
  const audiences = (servers.data?.mcpServers ?? []).map((server) => `mcp://${server.serverId}`);
  const errors = spawnResult.error ? spawnFieldErrors(apiProblem(spawnResult.error)) : {};
  const set =
    <K extends keyof SpawnForm>(key: K) =>
    (value: SpawnForm[K]) =>
      setForm((current) => ({ ...current, [key]: value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await spawn({
      input: {
        name: form.name,
        systemPrompt: form.systemPrompt,
        persona: { tone: form.tone, language: form.language },
        allowedTools: form.allowedTools,
        mcpAudiences: form.mcpAudiences,
        ...(form.role.trim() ? { role: form.role.trim() } : {}),
        ...(form.parentAgentId ? { parentAgentId: form.parentAgentId } : {}),
        ...(idempotencyKey ? { idempotencyKey } : {}),
      },
    });
    if (result.data) onSpawned(result.data.spawnAgent);
  }

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {spawnResult.error ? (
          <ErrorAlert error={spawnResult.error} title="The gateway refused the spawn" />
        ) : null}
        <TextInput
          label="Name"
          withAsterisk
          value={form.name}
          onChange={(event) => set('name')(event.currentTarget.value)}
          error={errors.name}
          data-autofocus
        />
        <TextInput
          label="Role"
          description="Matched by NPL rules as agent.role; empty: agent"
          value={form.role}
          onChange={(event) => set('role')(event.currentTarget.value)}
          error={errors.role}
        />
        <Textarea
          label="System prompt"
          autosize
          minRows={2}
          value={form.systemPrompt}
          onChange={(event) => set('systemPrompt')(event.currentTarget.value)}
          error={errors.systemPrompt}
        />
        <Group grow align="flex-start">
          <TextInput
            label="Persona tone"
            withAsterisk
            placeholder="terse"
            value={form.tone}
            onChange={(event) => set('tone')(event.currentTarget.value)}
            error={errors.tone}
          />
          <TextInput
            label="Persona language"
            withAsterisk
            value={form.language}
            onChange={(event) => set('language')(event.currentTarget.value)}
            error={errors.language}
          />
        </Group>
        <TagsInput
          label="Allowed tools"
          description="Exact names or * globs; Enter adds one"
          value={form.allowedTools}
          onChange={set('allowedTools')}
          error={errors.allowedTools}
        />
        <TagsInput
          label="MCP audiences"
          withAsterisk
          description="mcp://{serverId} of registered servers; its OAuth client gets tokens for these"
          data={audiences}
          value={form.mcpAudiences}
          onChange={set('mcpAudiences')}
          error={errors.mcpAudiences}
        />
        <Select
          label="Parent agent"
          description="For a sub-agent: it may hold only tools its parent holds"
          placeholder="None"
          clearable
          searchable
          data={parents.map((agent) => ({ value: agent.id, label: agent.name }))}
          value={form.parentAgentId}
          onChange={set('parentAgentId')}
          error={errors.parentAgentId}
        />
        <Group justify="flex-end">
          <Button type="submit" loading={spawnResult.fetching}>
            Spawn
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function SpawnAgentDrawer({
  opened,
  onClose,
  parents,
}: {
  opened: boolean;
  onClose(): void;
  parents: readonly AgentRow[];
}) {
  const [answer, setAnswer] = useState<SpawnAnswer | null>(null);
  const close = () => {
    setAnswer(null);
    onClose();
  };
  return (
    <Drawer
      opened={opened}
      onClose={close}
      position="right"
      size="lg"
      title={answer ? 'Agent spawned: copy its secrets' : 'Spawn an agent'}
    >
      {/* Unmounted when closed, so the next opening starts from an empty form. */}
      {opened && answer ? <SpawnSecrets answer={answer} onDone={close} /> : null}
      {opened && !answer ? <SpawnAgentForm parents={parents} onSpawned={setAnswer} /> : null}
    </Drawer>
  );
}
