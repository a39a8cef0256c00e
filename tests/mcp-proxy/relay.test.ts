// What the proxy relays (issue 14 item 7), with official SDK clients and a real SDK upstream
// (transport-support.ts startRelayUpstream): progress with the client's own progressToken and log
// messages on the call's stream before its result; the upstream's sampling and elicitation
// requests answered by the client before the result; results of every content type, `isError`
// results and tool definitions with JSON Schema 2020-12 keywords passed unchanged (deep-equal to
// the same client talking to the upstream directly); resources, prompts and ping passed through;
// notifications sent outside any request arriving on the GET stream. And the tenant's method
// blocking on both directions: a blocked server request (sampling) answered to the upstream with
// a JSON-RPC error the client never sees, a blocked client request (resources/read) refused
// without reaching the upstream; both audited.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  EmptyResultSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AuditRow, findAuditEntry } from '../data-plane/inspect/support.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALL_CONTENT_RESULT,
  apiKeyHeaders,
  ELICITATION_SCHEMA,
  PROMPTS,
  RELAY_TOOLS,
  RESOURCES,
  type RelayUpstream,
  startRelayUpstream,
  TOOL_ERROR_RESULT,
} from './transport-support.js';

const SERVER_ID = 'relay';

const SAMPLED: CreateMessageResult = {
  role: 'assistant',
  content: { type: 'text', text: 'a sampled answer' },
  model: 'test-model',
  stopReason: 'endTurn',
};

const ELICITED: ElicitResult = {
  action: 'accept',
  content: { name: 'Ada', size: 'm', confirm: true },
};

/** An SDK client declaring sampling and elicitation, recording what the upstream asked it. */
interface RelayClient {
  readonly client: Client;
  readonly sampling: CreateMessageRequest['params'][];
  readonly elicitations: ElicitRequest['params'][];
  readonly logs: unknown[];
  readonly toolListChanged: Promise<void>;
}

async function connectRelayClient(url: string, headers: Record<string, string>) {
  const client = new Client(
    { name: 'relay-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} } } },
  );
  const sampling: CreateMessageRequest['params'][] = [];
  const elicitations: ElicitRequest['params'][] = [];
  const logs: unknown[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampling.push(request.params);
    return SAMPLED;
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params);
    return ELICITED;
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  const toolListChanged = new Promise<void>((resolve) => {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return { client, sampling, elicitations, logs, toolListChanged } satisfies RelayClient;
}

/** The raw tools/call result (no client-side output validation: what crossed the wire). */
function callRaw(client: Client, name: string, args: Record<string, unknown> = {}) {
  return client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    CallToolResultSchema,
  );
}

describeEachDatabase('MCP proxy relay', (kind) => {
  let upstream: RelayUpstream;
  let gateway: TestGateway;
  let agentId: string;
  let proxyUrl: string;
  let proxied: RelayClient;
  let direct: RelayClient;

  beforeAll(async () => {
    upstream = await startRelayUpstream();
    gateway = await startTestGateway(kind);
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: [SERVER_ID] });
    await gateway.registerServer({
      tenantId: gateway.tenant.id,
      serverId: SERVER_ID,
      url: upstream.url,
    });
    agentId = await gateway.addAgent(gateway.tenant.id, { allowedTools: ['*'] });
    proxyUrl = `${gateway.url}/mcp/${SERVER_ID}`;
    proxied = await connectRelayClient(proxyUrl, apiKeyHeaders(gateway.tenant.key, agentId));
    direct = await connectRelayClient(upstream.url, {});
  });
  afterAll(async () => {
    await proxied?.client.close();
    await direct?.client.close();
    await gateway?.close();
    await upstream?.close();
  });

  describe('on the call’s own stream', () => {
    it('relays progress with the client’s own token, and log messages, before the result', async () => {
      const progress: Progress[] = [];
      const logsBefore = proxied.logs.length;
      const result = await proxied.client.request(
        { method: 'tools/call', params: { name: 'progress', arguments: { steps: 3 } } },
        CallToolResultSchema,
        { onprogress: (update) => progress.push(update) },
      );
      expect(result).toEqual({ content: [{ type: 'text', text: 'done after 3' }] });
      // The SDK routes progress by the token it chose: a rewritten token would reach nobody.
      expect(progress).toEqual(
        [1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })),
      );
      expect(proxied.logs.slice(logsBefore)).toEqual(
        [1, 2, 3].map((step) => ({ level: 'info', logger: 'relay', data: `log ${step}` })),
      );
    });

    it('relays the upstream’s sampling request to the client and its answer back before the result', async () => {
      const asked = proxied.sampling.length;
      const result = await callRaw(proxied.client, 'sample', { prompt: 'summarize this' });
      const [content] = result.content as { type: string; text: string }[];
      expect(JSON.parse(content?.text ?? '')).toEqual(SAMPLED);
      expect(proxied.sampling.slice(asked)).toEqual([
        {
          messages: [{ role: 'user', content: { type: 'text', text: 'summarize this' } }],
          maxTokens: 50,
        },
      ]);
      expect(upstream.answers.at(-1)).toEqual(SAMPLED);
    });

    it('relays the upstream’s elicitation (its schema unchanged) and the user’s answer', async () => {
      const asked = proxied.elicitations.length;
      const result = await callRaw(proxied.client, 'elicit');
      const [content] = result.content as { type: string; text: string }[];
      expect(JSON.parse(content?.text ?? '')).toEqual(ELICITED);
      expect(proxied.elicitations.slice(asked)).toEqual([
        { mode: 'form', message: 'Who are you?', requestedSchema: ELICITATION_SCHEMA },
      ]);
      expect(upstream.answers.at(-1)).toEqual(ELICITED);
    });
  });

  describe('what passes unchanged', () => {
    it('lists tools with JSON Schema 2020-12 keywords and annotations exactly as the upstream does', async () => {
      const through = await proxied.client.request({ method: 'tools/list' }, ListToolsResultSchema);
      const straight = await direct.client.request({ method: 'tools/list' }, ListToolsResultSchema);
      expect(through).toEqual(straight);
      expect(through.tools).toEqual(RELAY_TOOLS);
    });

    it('returns every content type, structuredContent and _meta unchanged', async () => {
      const through = await callRaw(proxied.client, 'all_content', { choice: 'a' });
      const straight = await callRaw(direct.client, 'all_content', { choice: 'a' });
      expect(through).toEqual(straight);
      expect(through).toEqual(ALL_CONTENT_RESULT);
    });

    it('returns an isError result as a result, not as a JSON-RPC error', async () => {
      const through = await callRaw(proxied.client, 'tool_error');
      expect(through).toEqual(TOOL_ERROR_RESULT);
      expect(await callRaw(direct.client, 'tool_error')).toEqual(through);
    });

    it('passes resources/list, resources/read, prompts/list and ping through', async () => {
      const { client } = proxied;
      expect((await client.listResources()).resources).toEqual(RESOURCES);
      expect(await client.listResources()).toEqual(await direct.client.listResources());
      expect(await client.readResource({ uri: 'file:///notes/a.txt' })).toEqual({
        contents: [{ uri: 'file:///notes/a.txt', mimeType: 'text/plain', text: 'contents' }],
      });
      expect((await client.listPrompts()).prompts).toEqual(PROMPTS);
      expect(await client.request({ method: 'ping' }, EmptyResultSchema)).toEqual({});
    });
  });

  describe('the GET stream', () => {
    it('delivers what the upstream sends outside any request (tools/list_changed)', async () => {
      // Two GET streams reach the upstream: the direct client's, and the one the proxy opens
      // once its client opened its own.
      await upstream.waitForGets(2);
      await upstream.announceToolListChanged();
      await proxied.toolListChanged;
    });
  });

  describe('method blocking', () => {
    afterEach(async () => {
      await gateway.setPolicy(gateway.tenant.id, { blockedMethods: [] });
    });

    /** The audit entries of this agent's MCP_METHOD_BLOCKED denies of `method`. */
    const blockedAudits = async (method: string): Promise<AuditRow[]> => {
      const rows = await gateway.db.query<{ id: string }>(
        `select id from audit_entries where "tenantId" = $1 and "resourceId" = $2`,
        [gateway.tenant.id, agentId],
      );
      const entries = await Promise.all(rows.map((row) => findAuditEntry(gateway.db, row.id)));
      return entries.filter(
        (entry): entry is AuditRow =>
          entry?.metadata.reasonCode === 'MCP_METHOD_BLOCKED' && entry.metadata.method === method,
      );
    };

    it('answers a blocked sampling request to the upstream with an error the client never sees, audited', async () => {
      await gateway.setPolicy(gateway.tenant.id, { blockedMethods: ['sampling/createMessage'] });
      const asked = proxied.sampling.length;
      const audited = (await blockedAudits('sampling/createMessage')).length;
      const result = await callRaw(proxied.client, 'sample', { prompt: 'may I?' });
      // The upstream's createMessage failed with the gateway's JSON-RPC error (its tool says so).
      expect(result.isError).toBe(true);
      expect(upstream.answers.at(-1)).toEqual({
        error: expect.stringContaining('MCP_METHOD_BLOCKED'),
      });
      expect(proxied.sampling.length).toBe(asked);
      await expect
        .poll(async () => (await blockedAudits('sampling/createMessage')).length)
        .toBe(audited + 1);
      const [entry] = (await blockedAudits('sampling/createMessage')).slice(-1);
      expect(entry).toMatchObject({
        action: 'inspect.deny',
        metadata: { decision: 'deny', serverId: SERVER_ID, method: 'sampling/createMessage' },
      });
    });

    it('refuses a blocked client request (resources/read) with MCP_METHOD_BLOCKED, audited, not forwarded', async () => {
      await gateway.setPolicy(gateway.tenant.id, { blockedMethods: ['resources/read'] });
      const forwarded = () =>
        upstream.log.filter((entry) => entry.rpcMethod === 'resources/read').length;
      const before = forwarded();
      const refused = await proxied.client.readResource({ uri: 'file:///notes/a.txt' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(McpError);
      const error = refused as McpError;
      expect(error.code).toBe(-32001);
      expect(error.message).toContain('MCP_METHOD_BLOCKED');
      const data = error.data as { reasonCode: string; auditId: string; inspectionId: string };
      expect(data.reasonCode).toBe('MCP_METHOD_BLOCKED');
      const entry = await findAuditEntry(gateway.db, data.auditId);
      expect(entry).toMatchObject({
        tenantId: gateway.tenant.id,
        action: 'inspect.deny',
        metadata: {
          decision: 'deny',
          reasonCode: 'MCP_METHOD_BLOCKED',
          method: 'resources/read',
          inspectionId: data.inspectionId,
        },
      });
      expect(forwarded()).toBe(before);
      // Other methods still pass.
      expect((await proxied.client.listResources()).resources).toEqual(RESOURCES);
    });
  });
});
