// GET|POST /oauth/authorize (RFC 6749 §4.1.1 with PKCE, RFC 7636): the authorization step of the
// authorization_code grant, where the agent proves who it is instead of a person logging in in
// a browser: it presents its identity credential (`agent_credential`, the VC as JSON text) and
// an `agent_proof` (authorization-proof.ts) signed with its registered key over the client id,
// the issuer and the code challenge. No API key: the proof is the authentication.
//
// Order (RFC 6749 §4.1.2.1): a missing, repeated or unknown client_id, or a redirect_uri that is
// not exactly one the client registered, is answered 400 JSON to the caller and never
// redirected. Every later refusal redirects to that redirect_uri with error, error_description,
// state and iss (RFC 9207): unauthorized_client (client not registered for the grant),
// unsupported_response_type, invalid_request (PKCE: code_challenge_method must be S256),
// invalid_target (the resource, as at the token endpoint), access_denied (the agent is killed,
// the credential does not verify for the client's agent, the proof is bad, expired or replayed).
// Success: 302 with `code` (authorization-codes.ts) and `state`.
//
// A client_id that is an https URL is a client ID metadata document client (docs/oauth.md): its
// document is fetched under a strict egress profile (metadata-documents.ts; its refusals are 400
// JSON with a CIMD_* reasonCode, never redirected) and names the redirect URIs. Such a client
// belongs to no agent until it proves one: the agent the credential names (the last link of a
// delegation chain, else the credential's subject) fixes the tenant, the proof must be that
// agent's, and the client is then recorded under it and audited like a registration
// (metadata-document-clients.ts). It gets authorization_code only.
//
// The credential is verified with the data plane's IdentityVerifier as an empty chain, or, for a
// delegate, with the optional `delegation_chain` (JSON text of the AgentDelegationCredential
// links from the root `agent_credential` to the calling agent): the client's agent must be the
// chain's last subject and the proof is by its key. The authorization grants a resource, not a
// tool (inspect still checks every call's tool), so the chain rule "the requested tool is
// permitted" is given the last credential's own first permitted tool (the root's without a
// chain; every earlier hop holds it unless the chain widens, which is refused anyway): what it
// still asks is that the credentials hold a tool at all. The code records the chain's agent ids,
// and the token names the delegators in an RFC 8693 `act` claim (token.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type GatewayError, gatewayError } from '../../../shared/errors/index.js';
import {
  type ClientMetadataDocument,
  isMetadataDocumentClientId,
} from '../../../shared/oauth/client-id-metadata.js';
import type { SqlExecutor } from '../../../storage/engine/database.js';
import type { AuditWriter } from '../../../storage/tables/audit-writer.js';
import type { IdentityVerifier } from '../../agentiam/identity-verifier.js';
import { type AuthorizationCodes, S256_CHALLENGE } from '../../oauth/authorization-codes.js';
import { verifyAuthorizationProof } from '../../oauth/authorization-proof.js';
import {
  metadataDocumentClient,
  recordMetadataDocumentClient,
} from '../../oauth/metadata-document-clients.js';
import type { MetadataDocuments } from '../../oauth/metadata-documents.js';
import type { IndexedClient } from '../../oauth/oauth-index.js';
import { type OAuthParams, optionalParam, toOAuthParams } from '../../oauth/request-params.js';
import { rfcErrorOf } from '../../oauth/rfc-errors.js';
import { auditAccessDenied } from '../../refusal-subjects.js';
import type { OAuthContext } from './context.js';
import { checkResource } from './token.js';

export const AUTHORIZATION_CODE = 'authorization_code';

export interface AuthorizeDependencies {
  readonly identity: IdentityVerifier | undefined;
  readonly codes: AuthorizationCodes;
  /** Client ID metadata documents; absent: a URL client_id is an unknown client. */
  readonly metadataDocuments?: MetadataDocuments | undefined;
  /** Where a metadata document client is recorded and audited. */
  readonly records?:
    | { readonly db: SqlExecutor; readonly audit: Pick<AuditWriter, 'append'> }
    | undefined;
}

/** A refusal sent to the redirect URI: the RFC string when it is not the code's own. */
function redirected(error: GatewayError, oauthError?: string): RedirectedError {
  return Object.assign(error, { redirectError: oauthError ?? rfcErrorOf(error.code) });
}
type RedirectedError = GatewayError & { redirectError: string };

function accessDenied(problem: string): RedirectedError {
  return redirected(gatewayError('OAUTH_INVALID_GRANT', { problem }), 'access_denied');
}

export async function authorize(
  ctx: OAuthContext,
  deps: AuthorizeDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const params = toOAuthParams(request.method === 'GET' ? request.query : request.body);
  // Never redirected: the redirect URI is not yet known to be the client's.
  const clientId = optionalParam(params, 'client_id');
  if (!clientId) throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'client_id is required' });
  const registered = ctx.index().clients.get(clientId);
  const document =
    registered === undefined && isMetadataDocumentClientId(clientId) && deps.metadataDocuments
      ? await deps.metadataDocuments.get(clientId)
      : undefined;
  if (!registered && !document) {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'unknown client_id' });
  }
  const redirectUri = optionalParam(params, 'redirect_uri');
  if (!redirectUri) {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'redirect_uri is required' });
  }
  const redirectUris = registered ? (registered.client.redirectUris ?? []) : document!.redirectUris;
  if (!redirectUris.includes(redirectUri)) {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem: registered
        ? 'redirect_uri is not one the client registered'
        : "redirect_uri is not one of the client ID metadata document's redirect_uris",
    });
  }
  // From here on, refusals go back to the client through its redirect URI.
  let state: string | undefined;
  let found = registered;
  try {
    state = optionalParam(params, 'state');
    found ??= metadataDocumentClientOf(ctx, params, document!);
    const code = await grantCode(ctx, deps, params, found, redirectUri, document);
    return sendRedirect(reply, redirectUri, { code, state, iss: ctx.issuer() });
  } catch (error) {
    const failure = error as Partial<RedirectedError>;
    if (failure.redirectError === undefined && failure.code === undefined) throw error;
    const rfc = failure.redirectError ?? rfcErrorOf(failure.code as GatewayError['code']);
    if (rfc === 'access_denied' && found) await auditAccessDenied(request, found, failure);
    if (rfc === 'server_error') request.log.error({ err: error }, 'authorization failed');
    return sendRedirect(reply, redirectUri, {
      error: rfc,
      error_description:
        rfc === 'server_error' ? 'the authorization server failed' : failure.message,
      state,
      iss: ctx.issuer(),
    });
  }
}

/**
 * A metadata document client as the agent its credential names (see the header): the tenant and
 * agent the credential claims, which the proof and the chain's verification then hold it to.
 */
function metadataDocumentClientOf(
  ctx: OAuthContext,
  params: OAuthParams,
  document: ClientMetadataDocument,
): IndexedClient {
  const text = optionalParam(params, 'agent_credential');
  if (!text)
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'agent_credential is required' });
  let credential: unknown;
  try {
    credential = JSON.parse(text);
  } catch {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'agent_credential is not JSON' });
  }
  const chain = delegationChainOf(optionalParam(params, 'delegation_chain'));
  const named = subjectOf(chain.length > 0 ? chain[chain.length - 1] : credential);
  const tenant = named ? ctx.store.current?.tenants.get(named.tenantId as never) : undefined;
  const agent = named ? tenant?.agents.get(named.agentId as never) : undefined;
  if (!tenant || !agent) {
    throw accessDenied('the agent_credential names no agent of this gateway');
  }
  return {
    client: metadataDocumentClient(tenant, agent, document),
    tenant,
  };
}

/** The tenant and agent a credential's subject names (unverified: a lookup key only). */
function subjectOf(credential: unknown): { tenantId: string; agentId: string } | undefined {
  const subject = (credential as { credentialSubject?: Record<string, unknown> } | null)
    ?.credentialSubject;
  const { tenantId, agentId } = subject ?? {};
  return typeof tenantId === 'string' && typeof agentId === 'string'
    ? { tenantId, agentId }
    : undefined;
}

async function grantCode(
  ctx: OAuthContext,
  deps: AuthorizeDependencies,
  params: OAuthParams,
  found: IndexedClient,
  redirectUri: string,
  document: ClientMetadataDocument | undefined,
): Promise<string> {
  const { client, tenant } = found;
  const required = (name: string) => {
    const value = optionalParam(params, name);
    if (!value) throw gatewayError('OAUTH_INVALID_REQUEST', { problem: `${name} is required` });
    return value;
  };
  if (!client.grantTypes.includes(AUTHORIZATION_CODE)) {
    throw gatewayError('OAUTH_UNAUTHORIZED_CLIENT', {
      clientId: client.id,
      grantType: AUTHORIZATION_CODE,
    });
  }
  const responseType = required('response_type');
  if (responseType !== 'code') {
    throw redirected(
      gatewayError('OAUTH_INVALID_REQUEST', {
        problem: `response_type ${responseType.slice(0, 40)} is not supported; only code`,
      }),
      'unsupported_response_type',
    );
  }
  const method = optionalParam(params, 'code_challenge_method');
  if (method !== 'S256') {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem:
        method === undefined
          ? 'code_challenge_method is required and must be S256'
          : 'code_challenge_method must be S256',
    });
  }
  const codeChallenge = required('code_challenge');
  if (!S256_CHALLENGE.test(codeChallenge)) {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem: 'code_challenge must be 43 base64url characters (S256)',
    });
  }
  const issuer = ctx.issuer();
  const resource = checkResource(ctx.index(), found, params, issuer);
  const credentialText = required('agent_credential');
  const proof = required('agent_proof');
  let credential: unknown;
  try {
    credential = JSON.parse(credentialText);
  } catch {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'agent_credential is not JSON' });
  }
  const chain = delegationChainOf(optionalParam(params, 'delegation_chain'));
  const agent = tenant.agents.get(client.agentId);
  if (!agent || agent.killed) {
    throw accessDenied(`agent ${client.agentId} is ${agent ? 'killed' : 'unknown'}`);
  }
  const identity = deps.identity;
  const snapshot = ctx.store.current;
  if (!identity || !snapshot) throw gatewayError('MCP_OAUTH_UNAVAILABLE');
  const now = new Date();
  const checked = await verifyAuthorizationProof(proof, {
    publicKeyMultibase: agent.publicKey,
    clientId: client.id,
    issuer,
    codeChallenge,
    now,
  });
  if (!checked.ok) throw accessDenied(checked.problem);
  const claim = identity.replays.claim(agent.publicKey, checked.jti, checked.iat, now.getTime());
  if (claim === 'replayed') throw accessDenied(`agent_proof jti ${checked.jti} was already used`);
  if (claim === 'full') throw accessDenied('too many live agent proofs; retry later');
  const result = await identity.verifyChain(
    snapshot,
    tenant,
    {
      rootCredential: credential,
      chain,
      requestedTool: firstToolOf(chain.length > 0 ? chain[chain.length - 1] : credential),
    },
    'verify',
    now,
  );
  if (result.failure !== null) {
    throw accessDenied(
      `agent_credential refused: ${result.failure.code}: ${result.failure.message}`,
    );
  }
  if (!result.valid || result.agentId !== agent.id) {
    throw accessDenied(
      chain.length === 0
        ? `agent_credential names agent ${result.agentId}, not the client's agent`
        : `delegation_chain ends at agent ${result.agentId}, not the client's agent`,
    );
  }
  if (document !== undefined) {
    if (!deps.records) throw gatewayError('MCP_OAUTH_UNAVAILABLE');
    const recorded = await recordMetadataDocumentClient(deps.records, tenant, agent, document);
    if (!recorded) throw accessDenied(`this client was revoked for agent ${agent.id}`);
  }
  const code = deps.codes.issue({
    clientId: client.id,
    tenantId: tenant.id,
    agentId: agent.id,
    delegationChain: chain.length === 0 ? [] : result.chain,
    redirectUri,
    codeChallenge,
    resource,
    credentialId: credentialIdOf(credential),
  });
  if (code === undefined) {
    throw redirected(
      gatewayError('OAUTH_INVALID_REQUEST', {
        problem: 'too many pending authorization codes; retry later',
      }),
      'temporarily_unavailable',
    );
  }
  return code;
}

/** The verified root credential's id (`urn:uuid:…`): its revocation revokes the tokens. */
function credentialIdOf(credential: unknown): string | undefined {
  const id = (credential as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

/** The `delegation_chain` parameter: a JSON array of links; none when absent. */
function delegationChainOf(text: string | undefined): readonly unknown[] {
  if (text === undefined) return [];
  let chain: unknown;
  try {
    chain = JSON.parse(text);
  } catch {
    throw gatewayError('OAUTH_INVALID_REQUEST', { problem: 'delegation_chain is not JSON' });
  }
  if (!Array.isArray(chain)) {
    throw gatewayError('OAUTH_INVALID_REQUEST', {
      problem: 'delegation_chain must be a JSON array of delegation credentials',
    });
  }
  return chain;
}

/** The credential's first permitted tool (see the header); '' when it names none. */
function firstToolOf(credential: unknown): string {
  const subject = (credential as { credentialSubject?: { permittedTools?: unknown } } | null)
    ?.credentialSubject;
  const tools = subject?.permittedTools;
  return Array.isArray(tools) && typeof tools[0] === 'string' ? tools[0] : '';
}

function sendRedirect(
  reply: FastifyReply,
  redirectUri: string,
  values: Readonly<Record<string, string | undefined>>,
): FastifyReply {
  const location = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) location.searchParams.set(name, value);
  }
  return reply
    .code(302)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('location', location.toString())
    .send();
}
