// Calls the GraphQL API of a test gateway over real HTTP, as a client would.
export interface GraphQLAnswer<Data = Record<string, unknown>> {
  readonly status: number;
  readonly data: Data | null | undefined;
  readonly errors:
    | readonly { message: string; path?: string[]; extensions?: Record<string, unknown> }[]
    | undefined;
}

export async function graphql<Data = Record<string, unknown>>(
  url: string,
  key: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
  init: { headers?: Record<string, string>; method?: 'GET' | 'POST' } = {},
): Promise<GraphQLAnswer<Data>> {
  const headers: Record<string, string> = {
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...init.headers,
  };
  const response =
    init.method === 'GET'
      ? await fetch(
          `${url}/graphql?${new URLSearchParams({ query, variables: JSON.stringify(variables) })}`,
          { headers },
        )
      : await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query, variables }),
        });
  const body = (await response.json()) as { data?: Data | null; errors?: GraphQLAnswer['errors'] };
  return { status: response.status, data: body.data, errors: body.errors };
}

/** The codes of the answer's errors, in order. */
export function errorCodes(answer: GraphQLAnswer<unknown>): unknown[] {
  return (answer.errors ?? []).map((error) => error.extensions?.code);
}

/** Test answers are read by path and asserted on: a loose type keeps the assertions short. */
// biome-ignore lint/suspicious/noExplicitAny: the assertions check the shape at run time
export type Loose = any;
