// AgentIAM control-plane tests: a test gateway whose control plane can sign (a master key handed
// to its key custodian, as `start` does once it has checked it), a manager API key and an agent
// with a real Ed25519 key; and an independent verifier — Digital Bazaar's verifyCredential and
// checkStatus with a static document loader built from the committed context files, the tenant's
// DID document (from the CA public keys in the database) and the status-list credentials stored
// in the database. Nothing is fetched from the network.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import {
  type JsonLdDocumentLoader,
  type VcVerifyResult,
  verifyCredential,
} from '@digitalbazaar/vc';
import { checkStatus } from '@digitalbazaar/vc-bitstring-status-list';
import { createAgent } from '../../control-plane/services/agents.js';
import { tenantDidDocument } from '../../shared/agentiam/dids.js';
import { type AgentId, asAgentId } from '../../shared/ids.js';
import type { CaKeyConfig } from '../../shared/snapshot/types.js';
import type { Database } from '../../storage/engine/database.js';
import { newAgentPublicKey } from './agent-keys.js';
import type { DatabaseKindUnderTest } from './databases.js';
import { postAsClient, startTestGateway, type TestGateway } from './gateway.js';

const CONTEXTS_DIR = new URL('../../schema/contexts/', import.meta.url);

export interface AgentIamTestGateway extends TestGateway {
  readonly masterKey: Buffer;
  /** An API key of the first tenant with agents:manage (and agents:execute). */
  readonly managerKey: string;
  /** An agent of the first tenant with a real `z6Mk…` key and allowedTools [read_file, search]. */
  readonly agent: { readonly id: AgentId; readonly publicKey: string };
  /** POST /api/v1/agentiam/credentials/issue with the manager key (or `key`). */
  issue(
    body: unknown,
    init?: { key?: string | null; contentType?: string },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** An agent of `tenantId` with a real key. */
  addKeyedAgent(tenantId: string, allowedTools?: string[]): Promise<AgentId>;
}

export async function startAgentIamGateway(
  kind: DatabaseKindUnderTest,
): Promise<AgentIamTestGateway> {
  const gateway = await startTestGateway(kind);
  const masterKey = randomBytes(32);
  gateway.runtime.keyCustody.useMasterKey(masterKey, 'the test master key');
  const managerKey = await gateway.addApiKey(gateway.tenant.id, [
    'agents:manage',
    'agents:execute',
  ]);
  const addKeyedAgent = async (tenantId: string, allowedTools = ['read_file', 'search']) => {
    const { id } = await createAgent(gateway.db, {
      tenantId,
      name: `keyed-${randomBytes(3).toString('hex')}`,
      allowedTools,
      publicKey: newAgentPublicKey(),
    });
    await gateway.sync();
    return asAgentId(id);
  };
  const agentId = await addKeyedAgent(gateway.tenant.id);
  const { publicKey } = await gateway.db.prisma.agent.findUniqueOrThrow({
    where: { id: agentId },
  });
  return {
    ...gateway,
    masterKey,
    managerKey,
    agent: { id: agentId, publicKey },
    addKeyedAgent,
    async issue(body, init = {}) {
      const key = init.key === undefined ? managerKey : init.key;
      const response = await postAsClient(
        `${gateway.url}/api/v1/agentiam/credentials/issue`,
        body,
        {
          key,
          contentType: init.contentType,
        },
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
}

/** The tenant's CA keys that still verify, as the snapshot carries them. */
export async function caKeysOf(db: Database, tenantId: string, now = new Date()) {
  const rows = await db.prisma.tenantSigningKey.findMany({
    where: {
      tenantId,
      purpose: 'agentiam-ca',
      OR: [{ status: 'active' }, { resolvableUntil: { gt: now } }],
    },
    orderBy: { createdAt: 'desc' },
  });
  return rows.map(
    (row): CaKeyConfig => ({
      id: row.id,
      publicKeyMultibase: row.publicKey,
      status: row.status as CaKeyConfig['status'],
      resolvableUntil: row.resolvableUntil?.toISOString() ?? null,
    }),
  );
}

/**
 * A jsonld document loader that knows only: the committed contexts (read from schema/contexts/
 * by their index, not through our loader), the given DID documents and their verification
 * methods, and the given documents by URL (status-list credentials).
 */
export function staticLoader(
  didDocuments: readonly Record<string, unknown>[],
  documents: ReadonlyMap<string, unknown> = new Map(),
): JsonLdDocumentLoader {
  const index = JSON.parse(readFileSync(new URL('index.json', CONTEXTS_DIR), 'utf8')) as Record<
    string,
    string
  >;
  const known = new Map<string, unknown>();
  for (const [uri, file] of Object.entries(index)) {
    known.set(uri, JSON.parse(readFileSync(new URL(file, CONTEXTS_DIR), 'utf8')));
  }
  for (const did of didDocuments) {
    known.set(did.id as string, did);
    for (const method of did.verificationMethod as Record<string, unknown>[]) {
      known.set(method.id as string, { '@context': did['@context'], ...method });
    }
  }
  for (const [url, document] of documents) known.set(url, document);
  return async (url) => {
    if (!known.has(url)) throw new Error(`the static loader does not know ${url}`);
    return { contextUrl: null, documentUrl: url, document: known.get(url) };
  };
}

/** Every status-list credential the tenant stores, by URL (its id). */
export async function statusListCredentialsOf(
  db: Database,
  tenantId: string,
): Promise<Map<string, unknown>> {
  const lists = await db.prisma.statusList.findMany({ where: { tenantId } });
  return new Map(
    lists
      .filter((list) => list.credential !== null)
      .map((list) => [(list.credential as { id: string }).id, list.credential]),
  );
}

export interface StandardVerification {
  readonly result: VcVerifyResult;
  /** The status bit of the credential's entry as checkStatus read it (true: revoked). */
  readonly revoked: boolean | undefined;
}

/**
 * Verifies a credential as an independent verifier would: @digitalbazaar/vc verifyCredential
 * with the Ed25519Signature2020 suite, the tenant's DID document built from the database, and
 * checkStatus of @digitalbazaar/vc-bitstring-status-list (which verifies the status-list
 * credential's proof and issuer too). A set bit does not make `verified` false: that library
 * reports it in the status result, which a verifier must read (here `revoked`).
 */
export async function verifyAsStandardVerifier(
  db: Database,
  tenantId: string,
  credential: unknown,
): Promise<StandardVerification> {
  const did = tenantDidDocument(tenantId, await caKeysOf(db, tenantId));
  const documentLoader = staticLoader([did], await statusListCredentialsOf(db, tenantId));
  const result = await verifyCredential({
    credential,
    suite: new Ed25519Signature2020(),
    documentLoader,
    checkStatus: (options) => checkStatus(options),
  });
  const status = result.statusResult as { results?: { status: boolean }[] } | undefined;
  return { result, revoked: status?.results?.[0]?.status };
}

/**
 * The same verification with what the gateway serves instead of what the database holds: the
 * tenant's DID document from the data plane's resolver (`GET /1.0/identifiers/{did}`) and the
 * status-list credential from its URL, both fetched over HTTP as a third party would.
 */
export async function verifyAsThirdParty(
  gatewayUrl: string,
  credential: Record<string, unknown>,
): Promise<StandardVerification> {
  const issuer = credential.issuer as string;
  const resolved = await fetch(`${gatewayUrl}/1.0/identifiers/${encodeURIComponent(issuer)}`);
  if (resolved.status !== 200) throw new Error(`${issuer} did not resolve: ${resolved.status}`);
  const body = (await resolved.json()) as Record<string, unknown>;
  const did = (body.didDocument ?? body) as Record<string, unknown>;
  const statusUrl = (credential.credentialStatus as { statusListCredential: string })
    .statusListCredential;
  const list = await fetch(statusUrl);
  if (list.status !== 200) throw new Error(`${statusUrl} answered ${list.status}`);
  const documentLoader = staticLoader([did], new Map([[statusUrl, await list.json()]]));
  const result = await verifyCredential({
    credential,
    suite: new Ed25519Signature2020(),
    documentLoader,
    checkStatus: (options) => checkStatus(options),
  });
  const status = result.statusResult as { results?: { status: boolean }[] } | undefined;
  return { result, revoked: status?.results?.[0]?.status };
}
