// POST /oauth/token. grant_type client_credentials (RFC 6749 §4.4): the client authenticates
// (client-auth.ts), names exactly one `resource` (RFC 8707) it, its agent and the tenant all
// allow, and gets an RFC 9068 access token for that resource signed in memory; issuance is
// recorded by the batched recorder, never on this path. The agent must exist and be alive.
// grant_type authorization_code (RFC 6749 §4.1.3, PKCE RFC 7636): the client authenticates the
// same way and presents a code of this data plane (authorization-codes.ts) with the redirect_uri
// it was issued for and the code_verifier whose S256 is the bound challenge; the code is used up
// by its first presentation by an authenticated client, whatever the outcome (a missing
// code_verifier or redirect_uri too: the code is taken out before any other parameter is read).
// An unknown, used or expired code, another client's, another redirect_uri or a wrong verifier
// is invalid_grant; a code presented again also revokes the tokens issued from it (RFC 6749
// §4.1.2), through the same revocation path as RFC 7009. The token's aud is the bound resource (a
// `resource` parameter, optional here, must name that same resource: invalid_target otherwise).
// A code authorized by a delegate (a `delegation_chain` at /oauth/authorize) gives a token whose
// `sub` is the delegate and whose RFC 8693 §4.1 `act` names the delegators, the nearest
// outermost: { sub: <its delegator>, act: { sub: <that one's delegator>, … } } down to the root
// agent. No `act` without delegation.
// A client ID metadata document client (its client_id an https URL, docs/oauth.md) presents its
// URL and a code the authorization endpoint gave it after the agent's identity proof, with PKCE;
// the code names its tenant and agent. It authenticates as its document says (none, or
// private_key_jwt with the document's keys: metadata-document-auth.ts). It gets authorization_code
// only (client_credentials: unauthorized_client).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { gatewayError } from '../../../shared/errors/index.js';
import { isMetadataDocumentClientId } from '../../../shared/oauth/client-id-metadata.js';
import {
  type AuthorizationCodes,
  type AuthorizationGrant,
  CODE_VERIFIER,
  s256,
} from '../../oauth/authorization-codes.js';
import type { IssuedTokenRecord } from '../../oauth/issued-tokens.js';
import type { MetadataDocumentAuthenticator } from '../../oauth/metadata-document-auth.js';
import { metadataDocumentClient } from '../../oauth/metadata-document-clients.js';
import type { IndexedClient, OAuthIndex } from '../../oauth/oauth-index.js';
import { type OAuthParams, requiredParam, toOAuthParams } from '../../oauth/request-params.js';
import { revokeAccessToken, type TokenRevocationDependencies } from '../../oauth/revocations.js';
import { type ActorClaim, DEFAULT_TOKEN_LIFETIME_SECONDS } from '../../oauth/token-signer.js';
import type { OAuthContext } from './context.js';
import { TOKEN_PATH } from './discovery.js';

export const CLIENT_CREDENTIALS = 'client_credentials';
export const AUTHORIZATION_CODE_GRANT = 'authorization_code';

export interface TokenDependencies {
  readonly codes: AuthorizationCodes;
  /** Metadata document clients' authentication; absent: a URL client_id is an unknown client. */
  readonly documentClients?: MetadataDocumentAuthenticator | undefined;
  /** Revokes the tokens of a replayed code. */
  readonly revocation: TokenRevocationDependencies;
}

export async function issueToken(
  ctx: OAuthContext,
  deps: TokenDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const documentClient =
    deps.documentClients === undefined ? undefined : metadataDocumentClientIdOf(request);
  const { index, params, client, presented } =
    documentClient === undefined
      ? await authenticated(ctx, deps, request)
      : await metadataDocumentGrant(ctx, deps, request, documentClient);
  const grantType = requiredParam(params, 'grant_type');
  if (!client.client.grantTypes.includes(grantType)) {
    throw gatewayError('OAUTH_UNAUTHORIZED_CLIENT', { clientId: client.client.id, grantType });
  }
  const agent = client.tenant.agents.get(client.client.agentId);
  if (!agent || agent.killed) {
    throw gatewayError('OAUTH_INVALID_GRANT', {
      problem: `agent ${client.client.agentId} is ${agent ? 'killed' : 'unknown'}`,
    });
  }
  const { resource, act } =
    presented === undefined
      ? { resource: checkResource(index, client, params, ctx.issuer()), act: undefined }
      : redeemGrant(index, presented.grant, client, params, ctx.issuer());
  const signer = ctx.signer;
  if (!signer) throw gatewayError('MCP_OAUTH_UNAVAILABLE');
  const scope = '';
  const minted = await signer.mint(
    {
      sub: agent.id,
      aud: resource,
      clientId: client.client.id,
      tenantId: client.tenant.id,
      scope,
      act,
      agentIdentity:
        grantType === AUTHORIZATION_CODE_GRANT
          ? 'agent_proof'
          : client.client.authMethod === 'private_key_jwt'
            ? 'private_key_jwt'
            : undefined,
    },
    DEFAULT_TOKEN_LIFETIME_SECONDS,
  );
  ctx.metrics?.oauthTokensIssued.inc({ kind: grantType });
  const issued: IssuedTokenRecord = {
    jti: minted.jti,
    tenantId: client.tenant.id,
    // The stored client: a metadata document client's record for this agent.
    clientId: (client.client as { recordId?: string }).recordId ?? client.client.id,
    agentId: agent.id,
    audience: resource,
    scope,
    issuedAt: minted.issuedAt,
    expiresAt: minted.expiresAt,
    credentialId: presented?.grant.credentialId ?? null,
  };
  ctx.issuedTokens?.record(issued);
  if (presented !== undefined) deps.codes.recordToken(presented.code, issued);
  return reply
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send({
      access_token: minted.token,
      token_type: 'Bearer',
      expires_in: minted.expiresAt - minted.issuedAt,
      scope,
    });
}

interface PresentedRequest {
  readonly index: OAuthIndex;
  readonly params: OAuthParams;
  readonly client: IndexedClient;
  readonly presented: { code: string; grant: AuthorizationGrant } | undefined;
}

/** A registered client, authenticated; its code (authorization_code) used up at once. */
async function authenticated(
  ctx: OAuthContext,
  deps: TokenDependencies,
  request: FastifyRequest,
): Promise<PresentedRequest> {
  const { index, params, client } = await ctx.authenticate(request);
  const grantType = requiredParam(params, 'grant_type');
  if (grantType !== CLIENT_CREDENTIALS && grantType !== AUTHORIZATION_CODE_GRANT) {
    throw gatewayError('OAUTH_UNSUPPORTED_GRANT_TYPE', { grantType });
  }
  // Used up first, before anything else can refuse the request (see the header).
  const presented =
    grantType === AUTHORIZATION_CODE_GRANT
      ? await consumeCode(deps, requiredParam(params, 'code'))
      : undefined;
  return { index, params, client, presented };
}

/** The client_id of a request by a metadata document client (a URL, and no secret). */
function metadataDocumentClientIdOf(request: FastifyRequest): string | undefined {
  if (request.headers.authorization !== undefined) return undefined;
  const params = toOAuthParams(request.body);
  const ids = params.get('client_id');
  if (ids?.length !== 1 || params.has('client_secret')) return undefined;
  const id = ids[0] as string;
  return isMetadataDocumentClientId(id) ? id : undefined;
}

/** A metadata document client's authorization_code request: the code names its agent. */
async function metadataDocumentGrant(
  ctx: OAuthContext,
  deps: TokenDependencies,
  request: FastifyRequest,
  clientId: string,
): Promise<PresentedRequest> {
  const params = toOAuthParams(request.body);
  const issuer = ctx.issuer();
  const document = await (deps.documentClients as MetadataDocumentAuthenticator).authenticate(
    clientId,
    params,
    [`${issuer}${TOKEN_PATH}`, issuer],
  );
  const grantType = requiredParam(params, 'grant_type');
  if (grantType !== AUTHORIZATION_CODE_GRANT) {
    if (grantType !== CLIENT_CREDENTIALS) {
      throw gatewayError('OAUTH_UNSUPPORTED_GRANT_TYPE', { grantType });
    }
    throw gatewayError('OAUTH_UNAUTHORIZED_CLIENT', {
      clientId: clientId.slice(0, 200),
      grantType,
    });
  }
  const presented = await consumeCode(deps, requiredParam(params, 'code'));
  const { grant } = presented;
  if (grant.clientId !== clientId) {
    throw gatewayError('OAUTH_INVALID_GRANT', { problem: 'the code was issued to another client' });
  }
  const tenant = ctx.store.current?.tenants.get(grant.tenantId as never);
  const agent = tenant?.agents.get(grant.agentId as never);
  if (!tenant || !agent) {
    throw gatewayError('OAUTH_INVALID_GRANT', { problem: `agent ${grant.agentId} is unknown` });
  }
  const client = metadataDocumentClient(tenant, agent, document);
  return { index: ctx.index(), params, client: { client, tenant }, presented };
}

/**
 * Takes the presented code out of the store. A code presented before revokes the tokens issued
 * from it, then is refused like an unknown one.
 */
async function consumeCode(
  deps: TokenDependencies,
  code: string,
): Promise<{ code: string; grant: AuthorizationGrant }> {
  const consumption = deps.codes.consume(code);
  if (consumption.kind === 'grant') return { code, grant: consumption.grant };
  if (consumption.kind === 'replayed') {
    for (const token of consumption.consumed.tokens) {
      await revokeAccessToken(deps.revocation, token, {
        actorType: 'system',
        actor: 'oauth_token_endpoint',
        reason: 'authorization code presented again (RFC 6749 §4.1.2)',
      });
    }
    throw gatewayError('OAUTH_INVALID_GRANT', {
      problem: 'the code was already used; the tokens issued from it are revoked',
    });
  }
  throw gatewayError('OAUTH_INVALID_GRANT', { problem: 'the code is unknown, used or expired' });
}

/**
 * The resource bound to a consumed code, once every binding matches (see the header), and the
 * `act` claim of its delegation chain.
 */
function redeemGrant(
  index: OAuthIndex,
  grant: AuthorizationGrant,
  found: IndexedClient,
  params: OAuthParams,
  issuer: string,
): { resource: string; act: ActorClaim | undefined } {
  const refuse = (problem: string) => gatewayError('OAUTH_INVALID_GRANT', { problem });
  if (grant.clientId !== found.client.id) throw refuse('the code was issued to another client');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = requiredParam(params, 'code_verifier');
  if (grant.redirectUri !== redirectUri) {
    throw refuse('redirect_uri is not the one the code was issued for');
  }
  if (!CODE_VERIFIER.test(verifier) || s256(verifier) !== grant.codeChallenge) {
    throw refuse('code_verifier does not match the code_challenge');
  }
  if (grant.agentId !== found.client.agentId) throw refuse('the code was issued to another agent');
  const requested = params.get('resource');
  if (requested !== undefined && (requested.length !== 1 || requested[0] !== grant.resource)) {
    throw gatewayError('OAUTH_INVALID_TARGET', {
      resource: requested.join(', ').slice(0, 200),
      problem: 'the code was issued for another resource',
    });
  }
  // The resource is judged again: the agent's audiences or the client's may have shrunk.
  return {
    resource: checkResource(index, found, new Map([['resource', [grant.resource]]]), issuer),
    act: actorClaimOf(grant.delegationChain),
  };
}

/**
 * RFC 8693 §4.1 `act` for a chain of agent ids root → delegate: the delegate's own delegator
 * outermost, the root innermost; undefined for no delegation.
 */
export function actorClaimOf(chain: readonly string[]): ActorClaim | undefined {
  let act: ActorClaim | undefined;
  // chain[last] is the delegate (the token's sub); the delegators are all before it.
  for (const agentId of chain.slice(0, -1))
    act = act === undefined ? { sub: agentId } : { sub: agentId, act };
  return act;
}

/**
 * The one requested resource, when it is `mcp://{serverId}` or `<issuer>/mcp/{serverId}` of a
 * server registered in the tenant whose `mcp://{serverId}` is in the agent's mcpAudiences and the
 * client's audiences; invalid_target otherwise (missing and repeated included).
 */
export function checkResource(
  index: OAuthIndex,
  { client, tenant }: IndexedClient,
  params: OAuthParams,
  issuer: string,
): string {
  const values = params.get('resource') ?? [];
  if (values.length !== 1) {
    throw gatewayError('OAUTH_INVALID_TARGET', {
      resource: values.length === 0 ? '(none)' : values.join(', '),
      problem: values.length === 0 ? 'resource is required' : 'exactly one resource is allowed',
    });
  }
  const resource = values[0] as string;
  const serverId = serverIdOf(resource, issuer);
  const refuse = (problem: string) =>
    gatewayError('OAUTH_INVALID_TARGET', { resource: resource.slice(0, 200), problem });
  if (serverId === undefined) {
    throw refuse('expected mcp://{serverId} or <issuer>/mcp/{serverId}');
  }
  if (!tenant.servers.has(serverId)) throw refuse('no such MCP server in the tenant');
  const audience = `mcp://${serverId}`;
  if (!index.audiences.get(tenant.id)?.get(client.agentId)?.has(audience)) {
    throw refuse(`${audience} is not one of the agent's mcpAudiences`);
  }
  if (!client.audiences.includes(audience)) {
    throw refuse(`${audience} is not one of the client's audiences`);
  }
  return resource;
}

const SERVER_ID = /^[^/?#\s]+$/;

function serverIdOf(resource: string, issuer: string): string | undefined {
  let rest: string | undefined;
  if (resource.startsWith('mcp://')) rest = resource.slice('mcp://'.length);
  else if (resource.startsWith(`${issuer}/mcp/`)) rest = resource.slice(`${issuer}/mcp/`.length);
  return rest !== undefined && SERVER_ID.test(rest) ? rest : undefined;
}
