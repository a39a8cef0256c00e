// An OAuth client of a test gateway: an agent with a real Ed25519 key and mcpAudiences, a
// registered client (control-plane/services/oauth-clients.ts), and helpers to call the OAuth
// endpoints with plain fetch.
import { generateKeyPairSync, type KeyObject, randomBytes, randomUUID } from 'node:crypto';
import { CompactSign, importJWK, SignJWT } from 'jose';
import { createAgent } from '../../../control-plane/services/agents.js';
import { registerOAuthClient } from '../../../control-plane/services/oauth-clients.js';
import { agentVerificationMethodId } from '../../../shared/agentiam/dids.js';
import type { Ed25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import {
  decodeEd25519PublicKey,
  encodeEd25519PublicKey,
} from '../../../shared/identity/ed25519-multibase.js';
import type { RegisteredClientAuthMethod } from '../../../shared/snapshot/index.js';
import type { TestGateway, TestTenant } from '../../support/gateway.js';

export interface TestClient {
  readonly tenant: TestTenant;
  readonly agentId: string;
  readonly clientId: string;
  /** null for a private_key_jwt client. */
  readonly secret: string | null;
  /** The agent's private key (signs private_key_jwt assertions). */
  readonly agentKey: KeyObject;
}

/** A tenant with servers `files` and `other`, an agent allowed both, and a client for it. */
export async function addClient(
  gateway: TestGateway,
  options: {
    authMethod?: RegisteredClientAuthMethod;
    tenant?: TestTenant;
    resources?: string[];
    grantTypes?: string[];
  } = {},
): Promise<TestClient> {
  const tenant = options.tenant ?? (await gateway.addTenant());
  if (!options.tenant) {
    for (const serverId of ['files', 'other', 'unlisted']) {
      await gateway.registerServer({
        tenantId: tenant.id,
        serverId,
        url: `http://127.0.0.1:9/${serverId}`,
      });
    }
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  const { id: agentId } = await createAgent(gateway.db, {
    tenantId: tenant.id,
    name: `agent-${randomBytes(3).toString('hex')}`,
    allowedTools: ['*'],
    mcpAudiences: ['mcp://files', 'mcp://other'],
    publicKey: encodeEd25519PublicKey(Buffer.from(x, 'base64url')),
  });
  const { clientId, secret } = await registerClientOf(gateway, {
    tenantId: tenant.id,
    agentId,
    grantTypes: options.grantTypes,
    authMethod: options.authMethod,
    resources: options.resources,
  });
  await gateway.sync();
  return { tenant, agentId, clientId, secret, agentKey: privateKey };
}

/**
 * Registers an OAuth client of an existing agent (default: client_credentials with
 * client_secret_basic); does not sync the gateway. `secret` is null for a private_key_jwt client.
 */
export async function registerClientOf(
  gateway: TestGateway,
  options: {
    tenantId: string;
    agentId: string;
    actor?: string;
    grantTypes?: string[] | undefined;
    authMethod?: RegisteredClientAuthMethod | undefined;
    redirectUris?: string[];
    resources?: string[] | undefined;
  },
): Promise<{ clientId: string; secret: string | null }> {
  const { client, clientSecret } = await registerOAuthClient(
    { db: gateway.db, audit: gateway.runtime.audit },
    {
      tenantId: options.tenantId,
      actor: options.actor ?? 'test',
      metadata: {
        agentId: options.agentId,
        clientName: undefined,
        grantTypes: options.grantTypes ?? ['client_credentials'],
        tokenEndpointAuthMethod: options.authMethod ?? 'client_secret_basic',
        redirectUris: options.redirectUris ?? [],
        scope: undefined,
        resources: options.resources,
      },
    },
  );
  return { clientId: client.id, secret: clientSecret };
}

export function basic(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

export interface OAuthAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** POSTs form parameters (an object; an array value repeats the parameter). */
export async function postForm(
  url: string,
  params: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<OAuthAnswer> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
  }
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form.toString(),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

/** A private_key_jwt client assertion (RFC 7523), valid unless overridden. */
export async function clientAssertion(
  client: TestClient,
  audience: string,
  overrides: { jti?: string; expiresIn?: number; key?: KeyObject; iss?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer(overrides.iss ?? client.clientId)
    .setSubject(client.clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (overrides.expiresIn ?? 60))
    .setJti(overrides.jti ?? randomUUID())
    .sign(overrides.key ?? client.agentKey);
}

/** Issued token rows of a client, once the recorder has written what it holds. */
export async function issuedCount(gateway: TestGateway, clientId: string): Promise<number> {
  await gateway.runtime.issuedTokens.flush();
  const rows = await gateway.db.query<{ n: number }>(
    `select count(*)::int as n from issued_tokens where "clientId" = $1`,
    [clientId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The `agent_proof` of /oauth/authorize (data-plane/oauth/authorization-proof.ts): an
 * agent-authz+jwt JWS by `key` over the client id, the issuer and the code challenge.
 */
export async function signAgentProof(
  key: Ed25519KeyMaterial,
  claims: {
    readonly clientId: string;
    readonly issuer: string;
    readonly codeChallenge: string;
    readonly iat?: number | undefined;
    readonly jti?: string | undefined;
  },
): Promise<string> {
  const x = Buffer.from(decodeEd25519PublicKey(key.publicKeyMultibase)!).toString('base64url');
  const privateKey = await importJWK(
    { kty: 'OKP', crv: 'Ed25519', x, d: Buffer.from(key.secretKey).toString('base64url') },
    'EdDSA',
  );
  const payload = {
    iss: claims.clientId,
    aud: claims.issuer,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    jti: claims.jti ?? randomUUID(),
    code_challenge: claims.codeChallenge,
  };
  return new CompactSign(Buffer.from(JSON.stringify(payload)))
    .setProtectedHeader({
      alg: 'EdDSA',
      typ: 'agent-authz+jwt',
      kid: agentVerificationMethodId(key.publicKeyMultibase),
    })
    .sign(privateKey);
}
