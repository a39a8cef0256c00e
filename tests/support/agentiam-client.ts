// AgentIAM for end-to-end tests: agents with real Ed25519 keys, identity credentials issued by the
// control plane's own service (as issueAgentCredential does) and published to the data plane,
// delegation links signed by the delegating agent's key (as the CLI or any VC library makes
// them), Agent-Proof headers, and inspect calls that carry an identity. Only the public
// verifiers' inputs are built here; every check under test is the gateway's.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  type AgentIamServiceDependencies,
  issueIdentityCredential,
  revokeIdentityCredential,
  rotateCaKey,
} from '../../control-plane/services/agentiam/credentials.js';
import { createAgent } from '../../control-plane/services/agents.js';
import { INSPECT_PATH } from '../../data-plane/routes/inspect/index.js';
import { delegationCredentialDocument, signCredential } from '../../shared/agentiam/credentials.js';
import { agentVerificationMethodId } from '../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../shared/agentiam/document-loader.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../shared/agentiam/ed25519-keys.js';
import { createAgentProof } from '../../shared/agentiam/proof-of-possession.js';
import { type AgentId, asAgentId } from '../../shared/ids.js';
import { postAsClient, type TestGateway } from './gateway.js';

/** An agent registered with the public half of a key the test holds. */
export interface KeyedAgent {
  readonly id: AgentId;
  readonly tenantId: string;
  readonly key: Ed25519KeyMaterial;
}

/** The control plane's AgentIAM services of the gateway, with a master key handed over. */
export function agentIamServices(gateway: TestGateway): AgentIamServiceDependencies {
  const { runtime } = gateway;
  if (!runtime.keyCustody.ready) runtime.keyCustody.useMasterKey(randomBytes(32), 'test');
  return {
    db: gateway.db,
    custody: runtime.keyCustody,
    publicUrl: runtime.publicUrl,
    audit: runtime.audit,
  };
}

/** Registers an agent with a fresh Ed25519 key (z6Mk… public key) and publishes it. */
export async function addKeyedAgent(
  gateway: TestGateway,
  tenantId: string,
  options: { allowedTools?: string[]; role?: string } = {},
): Promise<KeyedAgent> {
  const key = generateEd25519KeyMaterial();
  const { id } = await createAgent(gateway.db, {
    tenantId,
    name: `keyed-${randomBytes(3).toString('hex')}`,
    role: options.role ?? 'agent',
    allowedTools: options.allowedTools ?? ['*'],
    publicKey: key.publicKeyMultibase,
  });
  await gateway.sync();
  return { id: asAgentId(id), tenantId, key };
}

/** An identity credential for the agent, issued by its tenant CA and published. */
export async function issueCredential(
  gateway: TestGateway,
  agent: Pick<KeyedAgent, 'id' | 'tenantId'>,
  options: { ttlSeconds?: number; now?: Date } = {},
): Promise<Record<string, unknown>> {
  const issued = await issueIdentityCredential(
    agentIamServices(gateway),
    {
      tenantId: agent.tenantId,
      agentId: agent.id,
      supervisingUserId: 'test-supervisor',
      ttlSeconds: options.ttlSeconds,
      actor: 'test',
    },
    options.now,
  );
  await gateway.sync();
  return issued.credential;
}

/** Revokes a credential (its status-list bit) and publishes the new list. */
export async function revokeCredential(
  gateway: TestGateway,
  tenantId: string,
  credential: Record<string, unknown>,
): Promise<void> {
  await revokeIdentityCredential(agentIamServices(gateway), {
    tenantId,
    credentialId: String(credential.id),
    reason: 'test',
    actor: 'test',
  });
  await gateway.sync();
}

/** Rotates the tenant's CA key and publishes the result. */
export async function rotateTenantKey(gateway: TestGateway, tenantId: string): Promise<void> {
  await rotateCaKey(agentIamServices(gateway), { tenantId, actor: 'test' });
  await gateway.sync();
}

const offlineLoader = createDocumentLoader(() => null);

/**
 * A delegation link from `from` to `to`, signed with `from`'s key. Defaults: issued a second ago
 * (whole seconds), expiring an hour after; links of one chain made at different moments should
 * share one `expiresAt`, or a later link outlives an earlier one (DELEGATION_EXPIRY_NOT_NESTED).
 * `signer` overrides the key that signs (tamper tests).
 */
export async function delegate(options: {
  readonly tenantId: string;
  readonly from: KeyedAgent;
  readonly to: Pick<KeyedAgent, 'id' | 'key'>;
  readonly tools: readonly string[];
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
  readonly signer?: Ed25519KeyMaterial;
}): Promise<Record<string, unknown>> {
  const issuedAt = options.issuedAt ?? new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
  const signer = options.signer ?? options.from.key;
  return signCredential(
    delegationCredentialDocument({
      id: randomUUID(),
      tenantId: options.tenantId,
      delegatorPublicKey: options.from.key.publicKeyMultibase,
      delegatorAgentId: options.from.id,
      delegatePublicKey: options.to.key.publicKeyMultibase,
      delegateAgentId: options.to.id,
      permittedTools: options.tools,
      issuedAt,
      expiresAt: options.expiresAt ?? new Date(issuedAt.getTime() + 3600_000),
    }),
    {
      verificationMethod: agentVerificationMethodId(options.from.key.publicKeyMultibase),
      key: signer,
    },
    offlineLoader,
  );
}

/** An Agent-Proof for an inspect call with exactly `body` (the bytes sent). */
export function inspectProof(
  gateway: TestGateway,
  key: Ed25519KeyMaterial,
  body: string,
  options: { now?: Date; jti?: string; htu?: string; htm?: string } = {},
): Promise<string> {
  return createAgentProof({
    key,
    htm: options.htm ?? 'POST',
    htu: options.htu ?? `${gateway.url}${INSPECT_PATH}`,
    body,
    ...(options.now ? { now: options.now } : {}),
    ...(options.jti ? { jti: options.jti } : {}),
  });
}

export interface IdentityPresentation {
  /** The root credential; left out of the body when undefined. */
  readonly credential?: Record<string, unknown> | undefined;
  readonly chain?: readonly unknown[] | undefined;
  /** Signs the proof; no Agent-Proof header when undefined (unless `proof` is given). */
  readonly key?: Ed25519KeyMaterial | undefined;
  /** An exact Agent-Proof header value (replays, forgeries). */
  readonly proof?: string | undefined;
}

/**
 * POSTs an inspect body carrying the identity: agent_credential and delegation_chain added to
 * `body`, the Agent-Proof signed over the exact bytes sent. Returns the answer and the proof used.
 */
export async function inspectWithIdentity(
  gateway: TestGateway,
  body: Record<string, unknown>,
  identity: IdentityPresentation,
  init: { key?: string } = {},
): Promise<{ status: number; body: Record<string, unknown>; proof: string | undefined }> {
  const full: Record<string, unknown> = { ...body };
  if (identity.credential !== undefined) full.agent_credential = identity.credential;
  if (identity.chain !== undefined) full.delegation_chain = identity.chain;
  const text = JSON.stringify(full);
  const proof =
    identity.proof ??
    (identity.key === undefined ? undefined : await inspectProof(gateway, identity.key, text));
  const answer = await gateway.inspect(text, {
    ...(init.key ? { key: init.key } : {}),
    headers: proof === undefined ? {} : { 'agent-proof': proof },
  });
  return { ...answer, proof };
}

/** POST /api/v1/agentiam/delegation/verify with the tenant's key (or `key`). */
export async function verifyChainOverHttp(
  gateway: TestGateway,
  body: unknown,
  key = gateway.tenant.key,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await postAsClient(`${gateway.url}/api/v1/agentiam/delegation/verify`, body, {
    key,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
