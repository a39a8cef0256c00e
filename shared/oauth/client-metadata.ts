// RFC 7591 client metadata as registration accepts it: the client_credentials grant, the
// authorization_code grant (PKCE, docs/oauth.md; it needs at least one redirect URI and the
// response type `code`), or both, a secret (client_secret_basic, the default, or client_secret_post) or
// private_key_jwt with the agent's own registered key, redirect URIs kept as exact strings
// (https, or http on a loopback host: RFC 8252 §7.3) that every parser reads alike (below), plus
// our two fields: `agent_id` (the agent
// the client acts as) and `resources` (the mcp://{serverId} it may obtain tokens for). Metadata
// this server does not understand is ignored, as RFC 7591 §2 requires. One parse reports every
// wrong field; a refusal names the RFC 7591 error: invalid_redirect_uri when only redirect URIs
// are wrong, invalid_client_metadata otherwise. The REST route and the GraphQL mutation parse
// with this one schema, so both obey one set of rules. Every string must be text PostgreSQL
// stores (no NUL, no unpaired surrogate: invalid_client_metadata, never a failed insert).
// A redirect URI is accepted only in its canonical form: its WHATWG serialization
// (`new URL(uri).href`) is the URI itself, or the URI plus the root path `/`, and it has no
// userinfo and no backslash. A URI that parsers read differently (`http://127.0.0.1\@evil.com/`,
// `http://0x7f000001/`, `https://user@host/`) is refused at registration; the authorization
// endpoint then compares exact strings, so a client registered before this rule keeps its URIs.
import { z } from 'zod';
import { parseMcpAudience, storableString as storable } from '../agents/agent-rules.js';
import { OAUTH_CLIENT_AUTH_METHODS } from '../snapshot/types.js';
import { BODY_FIELD, describeIssues, wordIssues } from '../validation/field-issues.js';
import { OAUTH_REGISTRATION_ERRORS, type OAuthRegistrationError } from './errors.js';

export const CLIENT_NAME_MAX = 200;
export const REDIRECT_URIS_MAX = 20;
export const REDIRECT_URI_LENGTH_MAX = 2000;
export const CLIENT_RESOURCES_MAX = 100;
export const SCOPE_LENGTH_MAX = 1000;
/** The grant types registration accepts. */
export const SUPPORTED_GRANT_TYPES = ['client_credentials', 'authorization_code'] as const;
/** The response types of the authorization endpoint (RFC 6749 §3.1.1). */
export const SUPPORTED_RESPONSE_TYPES = ['code'] as const;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*NQCHAR. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/** Why a redirect URI is refused; undefined when it is acceptable. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not have a fragment (RFC 6749 §3.1.2)';
  if (uri.includes('\\')) return 'must not contain a backslash';
  if (url.username !== '' || url.password !== '') return 'must not have userinfo';
  if (url.href !== uri && url.href !== `${uri}/`) {
    return `must be written in its canonical form (${url.href.slice(0, 200)})`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must be https, or http on 127.0.0.1, [::1] or localhost';
}

const redirectUri = storable()
  .max(REDIRECT_URI_LENGTH_MAX, `must be at most ${REDIRECT_URI_LENGTH_MAX} characters`)
  .superRefine((uri, context) => {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

const resource = storable().refine(
  (value) => parseMcpAudience(value) !== undefined,
  'must be mcp://{serverId}',
);

export const clientMetadataSchema = z
  .object({
    agent_id: storable().min(1).max(256).describe('The agent (Agent.id) the client acts as.'),
    client_name: storable()
      .max(CLIENT_NAME_MAX, `must be 1-${CLIENT_NAME_MAX} characters`)
      .regex(/\S/, `must be 1-${CLIENT_NAME_MAX} characters, not only spaces`)
      .optional()
      .describe(`Name shown to operators, 1-${CLIENT_NAME_MAX} characters; default the agent's.`),
    grant_types: z
      .array(
        z.enum(SUPPORTED_GRANT_TYPES, {
          message: `must be one of ${SUPPORTED_GRANT_TYPES.join(', ')}`,
        }),
      )
      .min(1, 'must name at least one grant type')
      .max(10)
      .optional()
      .describe('Default ["client_credentials"]; "authorization_code" (PKCE) needs redirect_uris.'),
    response_types: z
      .array(storable())
      .max(1)
      .optional()
      .describe(
        '["code"] (the default) with the authorization_code grant; empty or absent without it.',
      ),
    token_endpoint_auth_method: z
      .enum(OAUTH_CLIENT_AUTH_METHODS, {
        message: `must be one of ${OAUTH_CLIENT_AUTH_METHODS.join(', ')}`,
      })
      .optional()
      .describe(
        'client_secret_basic (default) or client_secret_post (a secret is issued; either works ' +
          "at the token endpoint), or private_key_jwt (no secret: assertions signed by the agent's key).",
      ),
    redirect_uris: z
      .array(redirectUri)
      .max(REDIRECT_URIS_MAX, `must list at most ${REDIRECT_URIS_MAX} URIs`)
      .optional()
      .describe('Stored as exact strings: https, or http on a loopback host.'),
    scope: storable()
      .max(SCOPE_LENGTH_MAX)
      .regex(SCOPE, 'must be space-separated scope tokens (RFC 6749 §3.3)')
      .optional()
      .describe('Checked for syntax; not registered in this version.'),
    jwks: z
      .unknown()
      .refine((value) => value === undefined, {
        message: "is not accepted: a private_key_jwt client signs with the agent's registered key",
      })
      .optional()
      .describe("Not accepted: a private_key_jwt client signs with the agent's registered key."),
    jwks_uri: z
      .unknown()
      .refine((value) => value === undefined, {
        message: "is not accepted: a private_key_jwt client signs with the agent's registered key",
      })
      .optional()
      .describe('Not accepted, as jwks.'),
    resources: z
      .array(resource)
      .min(1, 'must name at least one resource')
      .max(CLIENT_RESOURCES_MAX, `must list at most ${CLIENT_RESOURCES_MAX} resources`)
      .optional()
      .describe(
        "mcp://{serverId} resources the client may obtain tokens for, each in the agent's " +
          'mcpAudiences; default all of them.',
      ),
  })
  .superRefine((data, context) => {
    const authorizationCode = data.grant_types?.includes('authorization_code') ?? false;
    const responseTypes = data.response_types ?? [];
    if (authorizationCode) {
      if ((data.redirect_uris ?? []).length === 0) {
        context.addIssue({
          code: 'custom',
          path: ['redirect_uris'],
          message: 'must list at least one redirect URI for the authorization_code grant',
        });
      }
      if (responseTypes.some((type) => type !== 'code')) {
        context.addIssue({
          code: 'custom',
          path: ['response_types'],
          message: 'must be ["code"] with the authorization_code grant',
        });
      }
    } else if (responseTypes.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['response_types'],
        message: 'must be empty: the client_credentials grant uses no authorization endpoint',
      });
    }
  })
  .describe('RFC 7591 client metadata, plus agent_id and resources.');

/** The response types a client of these grant types registers (RFC 7591 §2.1). */
export function responseTypesOf(grantTypes: readonly string[]): string[] {
  return grantTypes.includes('authorization_code') ? [...SUPPORTED_RESPONSE_TYPES] : [];
}

/** The metadata a registration stores, defaults filled in. */
export interface ClientMetadata {
  readonly agentId: string;
  readonly clientName: string | undefined;
  readonly grantTypes: readonly string[];
  readonly tokenEndpointAuthMethod: (typeof OAUTH_CLIENT_AUTH_METHODS)[number];
  readonly redirectUris: readonly string[];
  readonly scope: string | undefined;
  /** undefined: the agent's mcpAudiences. */
  readonly resources: readonly string[] | undefined;
}

export interface ClientMetadataIssue {
  /** The metadata field, as RFC 7591 names it (`redirect_uris.0`). */
  readonly field: string;
  readonly message: string;
}

export type ClientMetadataResult =
  | { readonly success: true; readonly metadata: ClientMetadata }
  | {
      readonly success: false;
      readonly error: OAuthRegistrationError;
      /** Every issue, `field: message; …`: the error_description. */
      readonly description: string;
      readonly issues: readonly ClientMetadataIssue[];
    };

/** Parses a registration request body; never throws. */
export function parseClientMetadata(body: unknown): ClientMetadataResult {
  const parsed = clientMetadataSchema.safeParse(body, { error: wordIssues(clientMetadataSchema) });
  if (!parsed.success) return metadataRefusal(clientMetadataIssues(parsed.error));
  return { success: true, metadata: toClientMetadata(parsed.data) };
}

/** The first issue of each field: a value of the wrong type fails its checks too. */
export function clientMetadataIssues(error: z.ZodError): ClientMetadataIssue[] {
  const issues = new Map<string, ClientMetadataIssue>();
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : BODY_FIELD;
    if (!issues.has(field)) issues.set(field, { field, message: issue.message });
  }
  return [...issues.values()];
}

/** The metadata a registration stores: the parsed body, defaults filled in, lists deduplicated. */
export function toClientMetadata(data: z.output<typeof clientMetadataSchema>): ClientMetadata {
  return {
    agentId: data.agent_id,
    clientName: data.client_name,
    grantTypes: [...new Set(data.grant_types ?? ['client_credentials'])],
    tokenEndpointAuthMethod: data.token_endpoint_auth_method ?? 'client_secret_basic',
    redirectUris: [...new Set(data.redirect_uris ?? [])],
    scope: data.scope,
    resources: data.resources === undefined ? undefined : [...new Set(data.resources)],
  };
}

/** The refusal of these issues: invalid_redirect_uri when every one is about a redirect URI. */
export function metadataRefusal(
  issues: readonly ClientMetadataIssue[],
): Extract<ClientMetadataResult, { success: false }> {
  const onlyRedirects = issues.every((issue) => issue.field.startsWith('redirect_uris'));
  return {
    success: false,
    error: onlyRedirects
      ? OAUTH_REGISTRATION_ERRORS.INVALID_REDIRECT_URI
      : OAUTH_REGISTRATION_ERRORS.INVALID_CLIENT_METADATA,
    description: describeIssues(issues),
    issues,
  };
}
