// The egress policy end to end (issue 22 item 7, docs/security.md "Egress"): registration refuses
// a URL whose literal address, or whose host name resolved now, is forbidden; a server whose name
// later resolves to a forbidden address is refused at connect time on every path (inspect's
// forward, the MCP proxy, the tools/list refresh); the deny list closes loopback. Host names
// resolve through a table injected into the gateway (no network); the upstream is a real
// loopback HTTP server counting what reaches it, closing each connection after its answer so
// that every request needs a new connection (and so a new egress check).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEgressList } from '../../../shared/egress/index.js';
import { ALL_SCOPES } from '../../../shared/identity/scopes.js';
import { errorCodes, graphql, type Loose } from '../../control-plane/graphql/support.js';
import { apiKeyHeaders, initializeMessage, mcpFetch } from '../../mcp-proxy/transport-support.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';

/** A minimal MCP server (JSON answers) that counts requests and closes every connection. */
interface CountingUpstream {
  readonly port: number;
  readonly requests: () => number;
  close(): Promise<void>;
}

async function startCountingUpstream(): Promise<CountingUpstream> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests++;
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => {
      response.setHeader('connection', 'close');
      const message = text === '' ? {} : (JSON.parse(text) as { id?: unknown; method?: string });
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'counting', version: '1.0.0' },
            }
          : message.method === 'tools/list'
            ? { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }
            : { content: [{ type: 'text', text: 'reached' }] };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The injected resolver: a mutable table of host name -> addresses. */
function tableResolver(table: Map<string, string[]>) {
  return async (hostname: string) => {
    const addresses = table.get(hostname);
    if (addresses === undefined) {
      throw Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' });
    }
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const REGISTER = `mutation($i: RegisterMcpServerInput!) {
  registerMcpServer(input: $i) { serverId url toolsRefreshError } }`;

async function egressEntries(gw: TestGateway) {
  await gw.runtime.audit.flush();
  return gw.db.prisma.auditEntry.findMany({
    where: { tenantId: gw.tenant.id, action: 'egress.refused' },
    orderBy: { createdAt: 'asc' },
  });
}

describeEachDatabase('egress policy', (kind) => {
  describe('built-in defaults', () => {
    let gw: TestGateway;
    let admin: string;
    let upstream: CountingUpstream;
    const table = new Map<string, string[]>();
    const q = (query: string, variables?: Record<string, unknown>) =>
      graphql<Record<string, Loose>>(gw.url, admin, query, variables);

    beforeAll(async () => {
      upstream = await startCountingUpstream();
      gw = await startTestGateway(kind, { egress: { resolve: tableResolver(table) } });
      admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
    });
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });

    it('registration refuses literal and resolved forbidden addresses: nothing stored, nothing sent, audited', async () => {
      table.set('metadata.test', ['93.184.216.34', '169.254.169.254']);
      table.set('mapped.test', ['::ffff:a9fe:a9fe']);
      const urls = [
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/',
        'http://[fd00:ec2::254]/',
        `http://0.0.0.0:${upstream.port}/mcp`,
        `http://[::]:${upstream.port}/mcp`,
        `http://metadata.test:${upstream.port}/mcp`,
        `http://mapped.test:${upstream.port}/mcp`,
      ];
      const before = (await egressEntries(gw)).length;
      for (const [index, url] of urls.entries()) {
        const answer = await q(REGISTER, { i: { serverId: `ssrf-${index}`, url } });
        expect(errorCodes(answer), url).toEqual(['UPSTREAM_ADDRESS_FORBIDDEN']);
        const error = answer.errors![0]!;
        expect(error.message).toContain('AGENT_GATEWAY_EGRESS_ALLOW');
        expect(error.extensions?.issues).toEqual([
          { field: 'input.url', message: expect.stringContaining('never contacted') },
        ]);
        // What a name resolved to is the operator's to see (audit), not the caller's.
        if (url.includes('.test:')) expect(error.message).not.toMatch(/169\.254|a9fe/);
      }
      expect(await gw.db.prisma.mcpServer.count({ where: { tenantId: gw.tenant.id } })).toBe(0);
      expect(upstream.requests()).toBe(0);
      const entries = (await egressEntries(gw)).slice(before);
      expect(entries.map((entry) => (entry.metadata as Loose).url)).toEqual(urls);
      expect(entries[5]!.metadata).toMatchObject({
        reasonCode: 'UPSTREAM_ADDRESS_FORBIDDEN',
        stage: 'registration',
        actorType: 'operator',
        serverId: 'ssrf-5',
        host: 'metadata.test',
        address: '169.254.169.254',
        rule: 'never',
      });
      expect(entries[6]!.metadata).toMatchObject({ address: '169.254.169.254' });
    });

    it('updateMcpServer refuses a forbidden url and keeps the stored one', async () => {
      table.set('good.test', ['127.0.0.1']);
      const url = `http://good.test:${upstream.port}/mcp`;
      const registered = await q(REGISTER, { i: { serverId: 'kept', url } });
      expect(registered.errors).toBeUndefined();
      const sent = upstream.requests();
      const answer = await q(
        `mutation($i: UpdateMcpServerInput!) { updateMcpServer(serverId: "kept", input: $i) { url } }`,
        { i: { url: 'http://169.254.169.254/' } },
      );
      expect(errorCodes(answer)).toEqual(['UPSTREAM_ADDRESS_FORBIDDEN']);
      expect(answer.errors![0]!.extensions?.issues).toEqual([
        { field: 'input.url', message: expect.any(String) },
      ]);
      const stored = await gw.db.prisma.mcpServer.findFirstOrThrow({
        where: { tenantId: gw.tenant.id, serverId: 'kept' },
      });
      expect(stored.url).toBe(url);
      expect(upstream.requests()).toBe(sent);
      await q('mutation { removeMcpServer(serverId: "kept") }');
    });

    describe('a name that resolved to an allowed address at registration and later does not', () => {
      const serverId = 'rebound';
      beforeAll(async () => {
        table.set('rebound.test', ['127.0.0.1']);
        const registered = await q(REGISTER, {
          i: { serverId, url: `http://rebound.test:${upstream.port}/mcp` },
        });
        expect(registered.errors).toBeUndefined();
        expect(registered.data?.registerMcpServer.toolsRefreshError).toBeNull();
        expect(upstream.requests()).toBeGreaterThan(0); // it was reachable then
        await gw.setPolicy(gw.tenant.id, { trustedServers: [serverId] });
        // DNS now answers the metadata address (rebinding), as IPv4-mapped IPv6 too.
        table.set('rebound.test', ['::ffff:169.254.169.254', '127.0.0.1']);
      });

      it('inspect answers 502 UPSTREAM_ADDRESS_FORBIDDEN, audited, the upstream receives nothing', async () => {
        const sent = upstream.requests();
        const before = (await egressEntries(gw)).length;
        const answer = await gw.inspect(
          inspectBody(gw.tenant.agentId, { server: serverId, mode: 'production' }),
        );
        expect(answer.status).toBe(502);
        expect(answer.body).toMatchObject({
          decision: 'allow',
          reasonCode: 'UPSTREAM_ADDRESS_FORBIDDEN',
          response: { error: { data: { reasonCode: 'UPSTREAM_ADDRESS_FORBIDDEN' } } },
        });
        expect(upstream.requests()).toBe(sent);
        const entries = (await egressEntries(gw)).slice(before);
        expect(entries).toHaveLength(1);
        expect(entries[0]!.resourceId).toBe(serverId);
        expect(entries[0]!.metadata).toMatchObject({
          stage: 'connect',
          actorType: 'system',
          host: 'rebound.test',
          address: '169.254.169.254',
          rule: 'never',
        });
      });

      it('the MCP proxy answers UPSTREAM_ADDRESS_FORBIDDEN in its JSON-RPC error, audited, nothing sent', async () => {
        const sent = upstream.requests();
        const before = (await egressEntries(gw)).length;
        const answer = await mcpFetch(`${gw.url}/mcp/${serverId}`, {
          body: initializeMessage(),
          headers: apiKeyHeaders(gw.tenant.key, gw.tenant.agentId),
        });
        expect(answer.status).toBe(200);
        expect(answer.body.error.data.reasonCode).toBe('UPSTREAM_ADDRESS_FORBIDDEN');
        expect(answer.body.error.message).toMatch(/^UPSTREAM_ADDRESS_FORBIDDEN: /);
        expect(answer.headers.get('mcp-session-id')).toBeNull();
        expect(upstream.requests()).toBe(sent);
        expect((await egressEntries(gw)).length).toBe(before + 1);
      });

      it('a tools/list refresh fails with the code on the server record, audited, nothing sent', async () => {
        const sent = upstream.requests();
        const before = (await egressEntries(gw)).length;
        await gw.runtime.toolRefresher.refreshAfterChange(gw.tenant.id, serverId);
        await gw.runtime.toolRefresher.idle();
        const servers = await q(`{ mcpServers { serverId toolsRefreshError } }`);
        const server = servers.data?.mcpServers.find(
          (entry: { serverId: string }) => entry.serverId === serverId,
        );
        expect(server.toolsRefreshError).toMatch(/^UPSTREAM_ADDRESS_FORBIDDEN: /);
        expect(upstream.requests()).toBe(sent);
        expect((await egressEntries(gw)).length).toBe(before + 1);
      });

      it('serves again once the name resolves to an allowed address', async () => {
        table.set('rebound.test', ['127.0.0.1']);
        const sent = upstream.requests();
        const answer = await gw.inspect(
          inspectBody(gw.tenant.agentId, { server: serverId, mode: 'production' }),
        );
        expect(answer.status).toBe(200);
        expect(upstream.requests()).toBeGreaterThan(sent);
      });
    });
  });

  describe('a deny list closing loopback', () => {
    let gw: TestGateway;
    let admin: string;
    let upstream: CountingUpstream;
    const table = new Map([['localhost', ['127.0.0.1', '::1']]]);

    beforeAll(async () => {
      upstream = await startCountingUpstream();
      const denied = {
        allow: parseEgressList('').list,
        deny: parseEgressList('127.0.0.0/8,::1,10.0.0.0/8').list,
      };
      gw = await startTestGateway(kind, {
        egress: { policy: denied, resolve: tableResolver(table) },
      });
      admin = await gw.addApiKey(gw.tenant.id, [...ALL_SCOPES]);
      // Registered before the operator closed loopback (the service, not the GraphQL check).
      await gw.registerServer({
        tenantId: gw.tenant.id,
        serverId: 'internal',
        url: `http://127.0.0.1:${upstream.port}/mcp`,
      });
      await gw.setPolicy(gw.tenant.id, { trustedServers: ['internal'] });
    });
    afterAll(async () => {
      await gw?.close();
      await upstream?.close();
    });

    it('registration of a loopback literal or name is refused naming AGENT_GATEWAY_EGRESS_DENY', async () => {
      for (const url of [
        `http://127.0.0.1:${upstream.port}/mcp`,
        `http://localhost:${upstream.port}/mcp`,
        `http://[::ffff:127.0.0.1]:${upstream.port}/mcp`,
      ]) {
        const answer = await graphql<Loose>(gw.url, admin, REGISTER, {
          i: { serverId: 'loop', url },
        });
        expect(errorCodes(answer), url).toEqual(['UPSTREAM_ADDRESS_FORBIDDEN']);
        expect(answer.errors![0]!.message).toContain('AGENT_GATEWAY_EGRESS_DENY');
      }
      expect(
        await gw.db.prisma.mcpServer.count({ where: { tenantId: gw.tenant.id, serverId: 'loop' } }),
      ).toBe(0);
      expect(upstream.requests()).toBe(0);
    });

    it('a forward to a server registered before is refused at connect time: 502, nothing sent', async () => {
      const before = (await egressEntries(gw)).length;
      const answer = await gw.inspect(
        inspectBody(gw.tenant.agentId, { server: 'internal', mode: 'production' }),
      );
      expect(answer.status).toBe(502);
      expect(answer.body.reasonCode).toBe('UPSTREAM_ADDRESS_FORBIDDEN');
      expect(String(answer.body.message)).toContain('AGENT_GATEWAY_EGRESS_DENY');
      expect(upstream.requests()).toBe(0);
      const entries = (await egressEntries(gw)).slice(before);
      expect(entries.map((entry) => (entry.metadata as Loose).rule)).toEqual(['deny_list']);
    });
  });
});
