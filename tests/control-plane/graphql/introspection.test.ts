// Introspection: on for authenticated API keys by default (GraphiQL and client generators need
// it), never for a request without a key, and off for everyone, over HTTP and over the socket,
// when the operator sets AGENT_GATEWAY_GRAPHQL_INTROSPECTION=false.
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { isIntrospectionDisabled } from '../../../control-plane/graphql/introspection.js';
import { loadConfig } from '../../../runtime/config.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { graphql, type Loose } from './support.js';

const INTROSPECT = '{ __schema { queryType { name } } }';

/** The answer of one operation over graphql-ws: its data, or the errors it was refused with. */
async function overSocket(url: string, key: string, query: string): Promise<Loose> {
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
  });
  try {
    return await new Promise((resolve) => {
      let answer: Loose;
      client.subscribe(
        { query },
        {
          next: (result) => {
            answer = result;
          },
          error: (errors) => resolve({ errors }),
          complete: () => resolve(answer),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

describe('the introspection decision', () => {
  it('allows an authenticated key while the switch is on, refuses everything else', () => {
    expect(isIntrospectionDisabled(true, true)).toBe(false);
    expect(isIntrospectionDisabled(true, false)).toBe(true);
    expect(isIntrospectionDisabled(false, true)).toBe(true);
    expect(isIntrospectionDisabled(false, false)).toBe(true);
  });
});

describe('GraphQL introspection by default', () => {
  let gw: TestGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startTestGateway('pglite');
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('an authenticated key introspects the schema, over HTTP and over the socket', async () => {
    const http = await graphql<Loose>(gw.url, admin, INTROSPECT);
    expect(http.errors).toBeUndefined();
    expect(http.data?.__schema.queryType.name).toBe('Query');
    const socket = await overSocket(gw.url, admin, INTROSPECT);
    expect(socket.data?.__schema.queryType.name).toBe('Query');
  });

  it('a request without a valid key gets no schema at all (401 before GraphQL)', async () => {
    const answer = await graphql(gw.url, undefined, INTROSPECT);
    expect(answer.status).toBe(401);
    expect(answer.data ?? null).toBeNull();
  });
});

describe('GraphQL introspection switched off', () => {
  let gw: TestGateway;
  let admin: string;
  beforeAll(async () => {
    const config = loadConfig({ AGENT_GATEWAY_GRAPHQL_INTROSPECTION: 'false' });
    gw = await startTestGateway('pglite', { graphqlIntrospection: config.graphqlIntrospection });
    admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
  });
  afterAll(() => gw?.close());

  it('refuses introspection to every key, over HTTP and over the socket', async () => {
    const http = await graphql(gw.url, admin, INTROSPECT);
    expect(http.data ?? null).toBeNull();
    expect(http.errors?.[0]?.message).toMatch(/introspection/i);
    const socket = await overSocket(gw.url, admin, INTROSPECT);
    expect(socket.data ?? null).toBeNull();
    expect(JSON.stringify(socket.errors)).toMatch(/introspection/i);
  });

  it('still answers ordinary operations, __typename included', async () => {
    const answer = await graphql<Loose>(gw.url, admin, '{ __typename me { apiKeyId } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.__typename).toBe('Query');
  });
});
