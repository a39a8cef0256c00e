// Under requireAgentIdentity the proxy accepts only access tokens obtained with proof of the
// agent's identity (issue 14 item 4): a private_key_jwt client's token works; a client secret's
// token and an API key are refused AGENT_IDENTITY_REQUIRED, audited, nothing forwarded.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../control-plane/services/agents.js';
import { encodeEd25519PublicKey } from '../../shared/identity/ed25519-multibase.js';
import { findAuditEntry } from '../data-plane/inspect/support.js';
import {
  basic,
  clientAssertion,
  postForm,
  registerClientOf,
} from '../data-plane/oauth/oauth-fixture.js';
import { type ProxyFixture, startProxyFixture } from './support.js';

describe('MCP proxy under requireAgentIdentity', () => {
  let fixture: ProxyFixture;
  let agentId: string;
  let agentKey: ReturnType<typeof generateKeyPairSync>['privateKey'];

  beforeAll(async () => {
    fixture = await startProxyFixture('pglite');
    const { gateway, serverId } = fixture;
    const keys = generateKeyPairSync('ed25519');
    agentKey = keys.privateKey;
    const x = keys.publicKey.export({ format: 'jwk' }).x as string;
    ({ id: agentId } = await createAgent(gateway.db, {
      tenantId: gateway.tenant.id,
      name: `identity-${randomBytes(3).toString('hex')}`,
      allowedTools: ['echo'],
      mcpAudiences: [`mcp://${serverId}`],
      publicKey: encodeEd25519PublicKey(Buffer.from(x, 'base64url')),
    }));
    await gateway.setPolicy(gateway.tenant.id, {
      trustedServers: [serverId],
      requireAgentIdentity: true,
    });
  });
  afterAll(() => fixture.close());

  const connect = async (headers: Record<string, string>) => {
    const client = new Client({ name: 'identity-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(fixture.proxyUrl), { requestInit: { headers } }),
    );
    return client;
  };
  const refusal = (headers: Record<string, string>) =>
    connect(headers).then(
      async (client) => {
        await client.close();
        return undefined;
      },
      (error: McpError) => error,
    );

  it('accepts a token obtained with private_key_jwt', async () => {
    const { gateway, proxyUrl, upstream } = fixture;
    const { clientId } = await registerClientOf(gateway, {
      tenantId: gateway.tenant.id,
      agentId,
      authMethod: 'private_key_jwt',
    });
    await gateway.sync();
    const tokenUrl = `${gateway.url}/oauth/token`;
    const assertion = await clientAssertion(
      { tenant: gateway.tenant, agentId, clientId, secret: null, agentKey },
      tokenUrl,
    );
    const token = await postForm(tokenUrl, {
      grant_type: 'client_credentials',
      resource: proxyUrl,
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    expect(token.status).toBe(200);
    const client = await connect({ authorization: `Bearer ${token.body.access_token}` });
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'proven' } });
      expect(result.structuredContent).toEqual({ text: 'proven' });
      expect(upstream.calls.get('echo')).toBe(1);
    } finally {
      await client.close();
    }
  });

  it("refuses a client secret's token and an API key, audited, nothing forwarded", async () => {
    const { gateway, proxyUrl, upstream } = fixture;
    const { clientId, secret } = await registerClientOf(gateway, {
      tenantId: gateway.tenant.id,
      agentId,
    });
    await gateway.sync();
    const token = await postForm(
      `${gateway.url}/oauth/token`,
      { grant_type: 'client_credentials', resource: proxyUrl },
      { authorization: basic(clientId, secret as string) },
    );
    expect(token.status).toBe(200);
    const requests = upstream.requests;
    const presented: Record<string, string>[] = [
      { authorization: `Bearer ${token.body.access_token}` },
      { authorization: `Bearer ${gateway.tenant.key}`, 'x-agent-id': agentId },
    ];
    for (const headers of presented) {
      const error = await refusal(headers);
      const data = error?.data as Record<string, string>;
      expect(data.reasonCode).toBe('AGENT_IDENTITY_REQUIRED');
      expect(await findAuditEntry(gateway.db, data.auditId)).toMatchObject({
        action: 'inspect.deny',
      });
    }
    expect(upstream.requests).toBe(requests);
  });
});
