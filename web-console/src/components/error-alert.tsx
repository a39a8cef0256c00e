// One way to show a failed GraphQL operation: the registry code, message and hint the API sent
// (extensions.code / extensions.hint), or the network failure, so an operator reads what to do.
import { Alert, Code, Text } from '@mantine/core';
import type { CombinedError } from '@urql/core';

export interface ApiProblem {
  readonly code: string | null;
  readonly message: string;
  readonly hint: string | null;
  /** Input issues (REQUEST_INVALID): the field (dotted path) and what is wrong with it. */
  readonly issues: readonly { field: string; message: string }[];
}

/** The first GraphQL error of a result, in registry terms. */
export function apiProblem(error: CombinedError): ApiProblem {
  const first = error.graphQLErrors[0];
  if (!first) {
    return {
      code: null,
      message: error.networkError?.message ?? error.message,
      hint: null,
      issues: [],
    };
  }
  const extensions = first.extensions as {
    code?: string;
    hint?: string;
    issues?: { field?: string; message?: string }[];
  };
  return {
    code: extensions.code ?? null,
    message: first.message,
    hint: extensions.hint ?? null,
    issues: (extensions.issues ?? []).map((issue) => ({
      field: issue.field ?? '',
      message: issue.message ?? '',
    })),
  };
}

export function ErrorAlert({ error, title }: { error: CombinedError; title?: string }) {
  const problem = apiProblem(error);
  return (
    <Alert color="red" title={title ?? 'The gateway refused this'} role="alert">
      <Text size="sm">
        {problem.code ? <Code>{problem.code}</Code> : null} {problem.message}
      </Text>
      {problem.hint ? (
        <Text size="sm" c="dimmed" mt={4}>
          {problem.hint}
        </Text>
      ) : null}
    </Alert>
  );
}
