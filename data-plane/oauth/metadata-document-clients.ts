// A client ID metadata document client, once an agent's identity proof at /oauth/authorize has
// named the agent it acts for: recorded in oauth_clients under that agent (one row per tenant,
// agent and URL; authMethod as its document says; `metadataUrl` the URL; its id `agc_`-shaped
// and derived from the three, so every data plane writes the same row) and audited like a
// registration the first time. The row is what issued tokens and the operator's list of clients refer to; the token
// endpoint knows the client by its URL and the code it was given (no snapshot needed), so a
// client works on the data plane that authorized it at once.
import { createHash } from 'node:crypto';
import { AUDIT_ACTIONS } from '../../shared/audit/index.js';
import type { ClientMetadataDocument } from '../../shared/oauth/client-id-metadata.js';
import type { OAuthClientConfig } from '../../shared/snapshot/index.js';
import type { SqlExecutor } from '../../storage/engine/database.js';
import type { AuditWriter } from '../../storage/tables/audit-writer.js';
import type { CompiledAgent, CompiledTenant } from '../store/compiled-snapshot.js';

export const METADATA_DOCUMENT_GRANT_TYPES = ['authorization_code'] as const;

/** The row id of `url`'s client for one agent of one tenant. */
export function metadataDocumentClientRecordId(
  tenantId: string,
  agentId: string,
  url: string,
): string {
  const digest = createHash('sha256').update(`${tenantId}\n${agentId}\n${url}`).digest('base64url');
  return `agc_${digest.slice(0, 22)}`;
}

/** The client as the authorization and token endpoints use it (client id: the URL). */
export function metadataDocumentClient(
  tenant: CompiledTenant,
  agent: CompiledAgent,
  document: ClientMetadataDocument,
): OAuthClientConfig & { readonly recordId: string } {
  return {
    id: document.clientId,
    recordId: metadataDocumentClientRecordId(tenant.id, agent.id, document.clientId),
    agentId: agent.id,
    secretHash: null,
    authMethod: document.authMethod,
    grantTypes: METADATA_DOCUMENT_GRANT_TYPES,
    // Every resource the agent may have: the agent's mcpAudiences decide (checkResource).
    audiences: tenant.source.agents.find((each) => each.id === agent.id)?.mcpAudiences ?? [],
    redirectUris: document.redirectUris,
  };
}

/**
 * Records the client under the agent (or refreshes its name and redirect URIs), auditing the
 * first time as oauth.client_registered. False when the agent's record of it was revoked (the
 * client may then not act for that agent).
 */
export async function recordMetadataDocumentClient(
  deps: { readonly db: SqlExecutor; readonly audit: Pick<AuditWriter, 'append'> },
  tenant: CompiledTenant,
  agent: CompiledAgent,
  document: ClientMetadataDocument,
): Promise<boolean> {
  const id = metadataDocumentClientRecordId(tenant.id, agent.id, document.clientId);
  const client = metadataDocumentClient(tenant, agent, document);
  const rows = await deps.db.query<{ inserted: boolean; revoked: boolean }>(
    `insert into oauth_clients
       (id, "tenantId", "agentId", name, "secretHash", "authMethod", "grantTypes", "redirectUris",
        audiences, "metadataUrl", "createdAt")
     values ($1, $2, $3, $4, null, $9, $5, $6, $7, $8, now())
     on conflict (id) do update set name = excluded.name, "authMethod" = excluded."authMethod",
       "redirectUris" = excluded."redirectUris"
     returning (xmax = 0) as inserted, ("revokedAt" is not null) as revoked`,
    [
      id,
      tenant.id,
      agent.id,
      (document.clientName ?? document.clientId).slice(0, 200),
      [...client.grantTypes],
      [...document.redirectUris],
      [...client.audiences],
      document.clientId,
      document.authMethod,
    ],
  );
  const row = rows[0];
  if (row?.revoked) return false;
  if (row?.inserted) {
    await deps.audit.append({
      tenantId: tenant.id,
      action: AUDIT_ACTIONS.OAUTH_CLIENT_REGISTERED,
      resourceType: 'oauth_client',
      resourceId: id,
      metadata: {
        actorType: 'agent',
        actor: agent.id,
        agentId: agent.id,
        name: document.clientName ?? document.clientId,
        authMethod: document.authMethod,
        metadataUrl: document.clientId,
        grantTypes: [...client.grantTypes],
        redirectUris: [...document.redirectUris],
        audiences: [...client.audiences],
      },
    });
  }
  return true;
}
