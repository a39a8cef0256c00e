// Register a server or edit one (its url and mock results; the serverId names it and stays).
// Mock results must be a JSON object (tool name -> the JSON-RPC result simulation mode answers
// with); the form checks that before sending, and shows the API's refusals at their fields.
import { Button, Group, JsonInput, Modal, Stack, Text, TextInput } from '@mantine/core';
import type { CombinedError } from '@urql/core';
import { useState } from 'react';
import { useMutation } from 'urql';
import { apiProblem, ErrorAlert } from '../../components/error-alert.tsx';
import { type McpServer, RegisterMcpServerMutation, UpdateMcpServerMutation } from './queries.ts';

type Field = 'serverId' | 'url' | 'mockResults';
type FieldErrors = Partial<Record<Field, string>>;

/** The form field an API issue names (`input.serverId`, `input.mockResults.echo`…), if any. */
function fieldOf(path: string): Field | null {
  const name = path.replace(/^input\./, '').split('.')[0];
  return name === 'serverId' || name === 'url' || name === 'mockResults' ? name : null;
}

/** The mock results text as an object, or why it is not one. */
export function parseMockResults(
  text: string,
): { value: Record<string, unknown> } | { error: string } {
  if (!text.trim()) return { value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'Not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'Must be a JSON object: tool name -> result' };
  }
  return { value: value as Record<string, unknown> };
}

function ServerFormFields({
  server,
  onDone,
  onCancel,
}: {
  server: McpServer | null;
  onDone(serverId: string): void;
  onCancel(): void;
}) {
  const [serverId, setServerId] = useState(server?.serverId ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [mockText, setMockText] = useState(
    server ? JSON.stringify(server.mockResults, null, 2) : '{}',
  );
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [otherError, setOtherError] = useState<CombinedError | null>(null);
  const [registerState, register] = useMutation(RegisterMcpServerMutation);
  const [updateState, update] = useMutation(UpdateMcpServerMutation);
  const saving = registerState.fetching || updateState.fetching;

  const submit = async () => {
    const mock = parseMockResults(mockText);
    if ('error' in mock) {
      setFieldErrors({ mockResults: mock.error });
      return;
    }
    setFieldErrors({});
    setOtherError(null);
    const result = server
      ? await update({ serverId: server.serverId, input: { url, mockResults: mock.value } })
      : await register({ input: { serverId, url, mockResults: mock.value } });
    if (!result.error) {
      onDone(server?.serverId ?? serverId);
      return;
    }
    const errors: FieldErrors = {};
    for (const issue of apiProblem(result.error).issues) {
      const field = fieldOf(issue.field);
      if (field) errors[field] = issue.message;
    }
    setFieldErrors(errors);
    // What no field shows is shown above the buttons.
    setOtherError(Object.keys(errors).length === 0 ? result.error : null);
  };

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <Stack gap="sm">
        <TextInput
          label="Server id"
          description="The {serverId} of mcp://{serverId}: letters, digits, . _ or -"
          value={serverId}
          onChange={(event) => setServerId(event.currentTarget.value)}
          error={fieldErrors.serverId}
          disabled={server !== null}
          required
          data-autofocus
        />
        <TextInput
          label="URL"
          description="Absolute http(s) URL production calls are forwarded to"
          value={url}
          onChange={(event) => setUrl(event.currentTarget.value)}
          error={fieldErrors.url}
          required
        />
        <JsonInput
          label="Mock results"
          description="Tool name -> the JSON-RPC result simulation mode answers with"
          value={mockText}
          onChange={setMockText}
          validationError="Not valid JSON"
          error={fieldErrors.mockResults}
          formatOnBlur
          // A fixed height: formatting on blur must not move the buttons under the pointer.
          rows={10}
          resize="vertical"
        />
        {otherError ? <ErrorAlert error={otherError} /> : null}
        <Text size="xs" c="dimmed">
          Saving asks the server for its tools (up to a few seconds); an unreachable server is saved
          anyway and its refresh error shown.
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={saving}>
            {server ? 'Save changes' : 'Register'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function ServerFormModal({
  opened,
  server,
  onClose,
  onSaved,
}: {
  opened: boolean;
  /** The server to edit; null to register a new one. */
  server: McpServer | null;
  onClose(): void;
  onSaved(serverId: string): void;
}) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={server ? `Edit ${server.serverId}` : 'Register an MCP server'}
      size="lg"
    >
      {/* Keyed so that each opening starts from the server's current values. */}
      <ServerFormFields
        key={server?.id ?? 'new'}
        server={server}
        onDone={onSaved}
        onCancel={onClose}
      />
    </Modal>
  );
}
