// AgentIAM credentials are W3C Verifiable Credentials an independent verifier accepts: each kind
// is checked with Digital Bazaar's @digitalbazaar/vc verifyCredential (and the revocation status
// with @digitalbazaar/vc-bitstring-status-list checkStatus) through a static document loader
// built here from schema/contexts/index.json and the DID documents the gateway serves — not
// through our loader. Every tampered, mis-signed or cross-tenant credential fails, both there and
// in verifyCredentialProof.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import type { JsonLdDocumentLoader } from '@digitalbazaar/vc';
import { verifyCredential } from '@digitalbazaar/vc';
import { checkStatus, createList } from '@digitalbazaar/vc-bitstring-status-list';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  delegationCredentialDocument,
  identityCredentialDocument,
  signCredential,
  statusListCredentialDocument,
} from '../../../shared/agentiam/credentials.js';
import {
  agentVerificationMethodId,
  didKeyDocument,
  tenantDid,
  tenantDidDocument,
  tenantVerificationMethodId,
} from '../../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../../shared/agentiam/document-loader.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
} from '../../../shared/agentiam/ed25519-keys.js';
import { verifyCredentialProof } from '../../../shared/agentiam/verify-proof.js';
import { GatewayError } from '../../../shared/errors/index.js';
import { findPackageRoot } from '../../../shared/package-root.js';
import type { CaKeyConfig } from '../../../shared/snapshot/types.js';

type Credential = Record<string, unknown>;

const TENANT_A = '6f2d1c3a-5b4e-4f70-8a91-b2c3d4e5f601';
const TENANT_B = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const ISSUED = new Date('2025-07-04T10:00:00.456Z');
const EXPIRES = new Date('2025-07-04T11:00:00.000Z');
/** The verifier's clock: inside both credentials' validity. */
const NOW = new Date('2025-07-04T10:30:00.000Z');
const STATUS_LIST_URL = `https://gateway.example/api/v1/agentiam/status-lists/${randomUUID()}`;
const STATUS_INDEX = 4242;
const LIST_LENGTH = 131_072;

const caA = generateEd25519KeyMaterial();
const caARetired = generateEd25519KeyMaterial();
const caB = generateEd25519KeyMaterial();
const agent = generateEd25519KeyMaterial();
const delegate = generateEd25519KeyMaterial();

function activeKey(id: string, key: Ed25519KeyMaterial): CaKeyConfig {
  return {
    id,
    publicKeyMultibase: key.publicKeyMultibase,
    status: 'active',
    resolvableUntil: null,
  };
}
const RETIRED_KID = 'kid-2025-01';
const retiredKey: CaKeyConfig = {
  id: RETIRED_KID,
  publicKeyMultibase: caARetired.publicKeyMultibase,
  status: 'retired',
  resolvableUntil: '2025-08-01T00:00:00.000Z',
};

/** The DID documents the gateway serves (GET /1.0/identifiers/{did}) while A's old key is in its window. */
const servedDidDocuments = [
  tenantDidDocument(TENANT_A, [activeKey('kid-2025-07', caA), retiredKey]),
  tenantDidDocument(TENANT_B, [activeKey('kid-b', caB)]),
  didKeyDocument(agent.publicKeyMultibase) as Credential,
  didKeyDocument(delegate.publicKeyMultibase) as Credential,
];

/** Our loader, as the gateway builds it from the snapshot's CA keys. */
const gatewayLoader = createDocumentLoader(
  (did) =>
    servedDidDocuments.find((document) => document.id === did && did.startsWith('did:svc:')) ??
    null,
);

/**
 * An independent verifier's loader: a static map of the committed contexts (via index.json), the
 * served DID documents with their verification methods, and the served status-list credential.
 */
function staticLoader(
  didDocuments: readonly Credential[],
  published: Readonly<Record<string, unknown>> = {},
): JsonLdDocumentLoader {
  const directory = join(findPackageRoot(), 'schema', 'contexts');
  const index = JSON.parse(readFileSync(join(directory, 'index.json'), 'utf8')) as Record<
    string,
    string
  >;
  const documents = new Map<string, unknown>();
  for (const [uri, file] of Object.entries(index)) {
    documents.set(uri, JSON.parse(readFileSync(join(directory, file), 'utf8')));
  }
  for (const didDocument of didDocuments) {
    documents.set(didDocument.id as string, didDocument);
    for (const method of didDocument.verificationMethod as Credential[]) {
      documents.set(method.id as string, { '@context': didDocument['@context'], ...method });
    }
  }
  for (const [url, document] of Object.entries(published)) documents.set(url, document);
  return async (url) => {
    const document = documents.get(url);
    if (document === undefined) throw new Error(`static loader: no document ${url}`);
    return { contextUrl: null, documentUrl: url, document };
  };
}

async function standardVerify(credential: Credential, loader: JsonLdDocumentLoader, now = NOW) {
  return verifyCredential({
    credential,
    suite: new Ed25519Signature2020(),
    documentLoader: loader,
    checkStatus,
    now,
  });
}

function identityDocument(tenantId = TENANT_A): Credential {
  return identityCredentialDocument({
    id: randomUUID(),
    tenantId,
    agentId: 'agent-root',
    agentPublicKey: agent.publicKeyMultibase,
    permittedTools: ['github.create_issue', 'github.list_issues'],
    supervisingUserId: 'user-7',
    issuedAt: ISSUED,
    expiresAt: EXPIRES,
    statusListUrl: STATUS_LIST_URL,
    statusListIndex: STATUS_INDEX,
  });
}

function delegationDocument(): Credential {
  return delegationCredentialDocument({
    id: randomUUID(),
    tenantId: TENANT_A,
    delegatorPublicKey: agent.publicKeyMultibase,
    delegatorAgentId: 'agent-root',
    delegatePublicKey: delegate.publicKeyMultibase,
    delegateAgentId: 'agent-delegate',
    permittedTools: ['github.list_issues'],
    issuedAt: ISSUED,
    expiresAt: new Date('2025-07-04T10:45:00.000Z'),
  });
}

async function signedStatusList(revoked: readonly number[]): Promise<Credential> {
  const list = await createList({ length: LIST_LENGTH });
  for (const index of revoked) list.setStatus(index, true);
  return signCredential(
    statusListCredentialDocument({
      url: STATUS_LIST_URL,
      tenantId: TENANT_A,
      issuedAt: ISSUED,
      encodedList: await list.encode(),
    }),
    { verificationMethod: tenantVerificationMethodId(TENANT_A), key: caA },
    gatewayLoader,
  );
}

const byCaA = { verificationMethod: tenantVerificationMethodId(TENANT_A), key: caA };
const byAgent = {
  verificationMethod: agentVerificationMethodId(agent.publicKeyMultibase),
  key: agent,
};

let identity: Credential;
let delegation: Credential;
let statusList: Credential;
let verifier: JsonLdDocumentLoader;

beforeAll(async () => {
  identity = await signCredential(identityDocument(), byCaA, gatewayLoader);
  delegation = await signCredential(delegationDocument(), byAgent, gatewayLoader);
  statusList = await signedStatusList([]);
  verifier = staticLoader(servedDidDocuments, { [STATUS_LIST_URL]: statusList });
});

/** A deep copy with one change. */
function tampered(credential: Credential, change: (copy: Credential) => void): Credential {
  const copy = structuredClone(credential);
  change(copy);
  return copy;
}

async function expectRejected(credential: Credential, loader = verifier): Promise<string> {
  const standard = await standardVerify(credential, loader);
  expect(standard.verified).toBe(false);
  const ours = await verifyCredentialProof(credential, gatewayLoader);
  expect(ours.verified).toBe(false);
  return ours.verified ? '' : ours.reason;
}

describe('issued credentials verify with @digitalbazaar/vc and a static loader', () => {
  it('identity credential: the contract shape, signed by did:svc:<tenant>#agentiam-ca', async () => {
    const issuer = tenantDid(TENANT_A);
    expect(identity).toMatchObject({
      '@context': [
        'https://www.w3.org/2018/credentials/v1',
        'https://www.w3.org/ns/credentials/status/v1',
        'https://w3id.org/security/suites/ed25519-2020/v1',
        'https://agent-gateway.dev/contexts/agentiam/v1',
      ],
      type: ['VerifiableCredential', 'AgentIdentityCredential'],
      issuer,
      issuanceDate: '2025-07-04T10:00:00Z',
      expirationDate: '2025-07-04T11:00:00Z',
      credentialSubject: {
        id: `did:key:${agent.publicKeyMultibase}`,
        tenantId: TENANT_A,
        agentId: 'agent-root',
        permittedTools: ['github.create_issue', 'github.list_issues'],
        nonTransferable: true,
        supervisingUserId: 'user-7',
      },
      credentialStatus: {
        id: `${STATUS_LIST_URL}#${STATUS_INDEX}`,
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: String(STATUS_INDEX),
        statusListCredential: STATUS_LIST_URL,
      },
      proof: {
        type: 'Ed25519Signature2020',
        created: '2025-07-04T10:00:00Z',
        proofPurpose: 'assertionMethod',
        verificationMethod: `${issuer}#agentiam-ca`,
      },
    });
    expect(identity.id).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);

    const result = await standardVerify(identity, verifier);
    expect(result.error).toBeUndefined();
    expect(result.verified).toBe(true);
    await expect(verifyCredentialProof(identity, gatewayLoader)).resolves.toEqual({
      verified: true,
    });
  });

  it('status-list credential: a BitstringStatusListCredential of the same issuer', async () => {
    expect(statusList).toMatchObject({
      '@context': [
        'https://www.w3.org/2018/credentials/v1',
        'https://www.w3.org/ns/credentials/status/v1',
        'https://w3id.org/security/suites/ed25519-2020/v1',
      ],
      id: STATUS_LIST_URL,
      type: ['VerifiableCredential', 'BitstringStatusListCredential'],
      issuer: tenantDid(TENANT_A),
      credentialSubject: {
        id: `${STATUS_LIST_URL}#list`,
        type: 'BitstringStatusList',
        statusPurpose: 'revocation',
      },
      proof: { verificationMethod: tenantVerificationMethodId(TENANT_A) },
    });
    const result = await standardVerify(statusList, verifier);
    expect(result.error).toBeUndefined();
    expect(result.verified).toBe(true);
    await expect(verifyCredentialProof(statusList, gatewayLoader)).resolves.toEqual({
      verified: true,
    });
  });

  it("delegation credential: issued and signed by the delegator's did:key", async () => {
    const delegator = `did:key:${agent.publicKeyMultibase}`;
    expect(delegation).toMatchObject({
      '@context': [
        'https://www.w3.org/2018/credentials/v1',
        'https://w3id.org/security/suites/ed25519-2020/v1',
        'https://agent-gateway.dev/contexts/agentiam/v1',
      ],
      type: ['VerifiableCredential', 'AgentDelegationCredential'],
      issuer: delegator,
      credentialSubject: {
        id: `did:key:${delegate.publicKeyMultibase}`,
        tenantId: TENANT_A,
        agentId: 'agent-delegate',
        delegatorAgentId: 'agent-root',
        permittedTools: ['github.list_issues'],
      },
      proof: {
        proofPurpose: 'assertionMethod',
        verificationMethod: `${delegator}#${agent.publicKeyMultibase}`,
      },
    });
    expect(delegation.credentialStatus).toBeUndefined();
    const result = await standardVerify(delegation, verifier);
    expect(result.error).toBeUndefined();
    expect(result.verified).toBe(true);
    await expect(verifyCredentialProof(delegation, gatewayLoader)).resolves.toEqual({
      verified: true,
    });
  });

  it('signing leaves the unsigned document unchanged', async () => {
    const document = identityDocument();
    const before = structuredClone(document);
    await signCredential(document, byCaA, gatewayLoader);
    expect(document).toEqual(before);
  });
});

describe('tampered or mis-signed credentials fail', () => {
  it('one changed field of an identity credential', async () => {
    const changes: Array<(copy: Credential) => void> = [
      (c) => {
        (c.credentialSubject as Credential).agentId = 'agent-other';
      },
      (c) => {
        (c.credentialSubject as Credential).permittedTools = [
          'github.create_issue',
          'github.list_issues',
          'github.delete_repo',
        ];
      },
      (c) => {
        (c.credentialSubject as Credential).nonTransferable = false;
      },
      (c) => {
        (c.credentialSubject as Credential).id = `did:key:${delegate.publicKeyMultibase}`;
      },
      (c) => {
        c.expirationDate = '2025-07-05T11:00:00Z';
      },
      (c) => {
        (c.credentialStatus as Credential).statusListIndex = '1';
      },
    ];
    for (const change of changes) {
      expect(await expectRejected(tampered(identity, change))).toBe('Invalid signature.');
    }
  });

  it('one changed field of a delegation credential', async () => {
    const widened = tampered(delegation, (c) => {
      (c.credentialSubject as Credential).permittedTools = ['github.list_issues', 'github.push'];
    });
    expect(await expectRejected(widened)).toBe('Invalid signature.');
  });

  it('a changed proof', async () => {
    const proofChanges: Array<(proof: Credential) => void> = [
      (p) => {
        const value = p.proofValue as string;
        const last = value.at(-1) === 'A' ? 'B' : 'A';
        p.proofValue = `${value.slice(0, -1)}${last}`;
      },
      (p) => {
        p.created = '2025-07-04T10:00:01Z';
      },
      (p) => {
        p.verificationMethod = `${tenantDid(TENANT_A)}#agentiam-ca-${RETIRED_KID}`;
      },
      (p) => {
        p.proofPurpose = 'authentication';
      },
    ];
    for (const change of proofChanges) {
      await expectRejected(tampered(identity, (c) => change(c.proof as Credential)));
    }
    const twoProofs = tampered(identity, (c) => {
      c.proof = [c.proof, c.proof];
    });
    expect((await verifyCredentialProof(twoProofs, gatewayLoader)).verified).toBe(false);
  });

  it("another tenant's CA key, under either tenant's verification method", async () => {
    // Tenant B's key under tenant A's method name: the signature is not A's.
    const asTenantA = await signCredential(
      identityDocument(),
      { verificationMethod: tenantVerificationMethodId(TENANT_A), key: caB },
      gatewayLoader,
    );
    expect(await expectRejected(asTenantA)).toBe('Invalid signature.');

    // Tenant B's key, named honestly, on a credential claiming tenant A as issuer.
    const byTenantB = await signCredential(
      identityDocument(),
      { verificationMethod: tenantVerificationMethodId(TENANT_B), key: caB },
      gatewayLoader,
    );
    expect(await expectRejected(byTenantB)).toBe(
      'Credential issuer must match the verification method controller.',
    );
  });

  it('a key its controller does not list under assertionMethod', async () => {
    const { assertionMethod: _listed, ...unlisted } = servedDidDocuments[0] as Credential;
    const loader = staticLoader([unlisted, ...servedDidDocuments.slice(1)], {
      [STATUS_LIST_URL]: statusList,
    });
    const result = await standardVerify(identity, loader);
    expect(result.verified).toBe(false);
    const [cause] = (result.error as { errors: Error[] }).errors;
    expect(cause?.message).toMatch(
      /not authorized by controller for proof purpose "assertionMethod"/,
    );
  });

  it('refuses to sign with a secret key that is not the public key it is paired with', async () => {
    const mismatched = { publicKeyMultibase: caA.publicKeyMultibase, secretKey: caB.secretKey };
    const error = await signCredential(
      identityDocument(),
      { verificationMethod: tenantVerificationMethodId(TENANT_A), key: mismatched },
      gatewayLoader,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('SIGNING_KEY_UNAVAILABLE');
  });

  it("an agent key signing as the tenant, and a delegate signing the delegator's link", async () => {
    const agentAsCa = await signCredential(identityDocument(), byAgent, gatewayLoader);
    expect(await expectRejected(agentAsCa)).toBe(
      'Credential issuer must match the verification method controller.',
    );
    const byDelegate = await signCredential(
      delegationDocument(),
      {
        verificationMethod: agentVerificationMethodId(delegate.publicKeyMultibase),
        key: delegate,
      },
      gatewayLoader,
    );
    expect(await expectRejected(byDelegate)).toBe(
      'Credential issuer must match the verification method controller.',
    );
  });

  it('a credential using a term no context defines (safe mode canonicalization)', async () => {
    const unsigned = { ...identityDocument(), note: 'not in any context' };
    const error = await signCredential(unsigned, byCaA, gatewayLoader).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('INTERNAL_ERROR');
    expect(String(((error as GatewayError).cause as Error).message)).toMatch(/safe mode/i);

    const extended = tampered(identity, (c) => {
      c.note = 'added after signing';
    });
    expect(await expectRejected(extended)).toMatch(/safe mode/i);
  });

  it('a credential naming a document nobody serves fails without fetching it', async () => {
    const foreignContext = tampered(identity, (c) => {
      (c['@context'] as string[]).push('https://www.w3.org/2018/credentials/examples/v1');
    });
    expect(await expectRejected(foreignContext)).toMatch(
      /^no JSON-LD document https:\/\/www\.w3\.org\/2018\/credentials\/examples\/v1 /,
    );
    const unknownTenant = tampered(identity, (c) => {
      c.issuer = 'did:svc:00000000-0000-4000-8000-000000000000';
      (c.proof as Credential).verificationMethod =
        'did:svc:00000000-0000-4000-8000-000000000000#agentiam-ca';
    });
    expect(await expectRejected(unknownTenant)).toMatch(
      /^no JSON-LD document did:svc:00000000-0000-4000-8000-000000000000#agentiam-ca /,
    );
  });
});

describe('key rotation', () => {
  it('a credential signed by the retired key verifies while the DID document lists it', async () => {
    const retiredMethod = `${tenantDid(TENANT_A)}#agentiam-ca-${RETIRED_KID}`;
    const tenantDocument = servedDidDocuments[0] as Credential;
    expect(tenantDocument.assertionMethod).toEqual([
      tenantVerificationMethodId(TENANT_A),
      retiredMethod,
    ]);
    const old = await signCredential(
      identityDocument(),
      { verificationMethod: retiredMethod, key: caARetired },
      gatewayLoader,
    );
    expect((await standardVerify(old, verifier)).verified).toBe(true);
    await expect(verifyCredentialProof(old, gatewayLoader)).resolves.toEqual({ verified: true });

    // After the window the document lists the active key only.
    const afterWindow = [tenantDidDocument(TENANT_A, [activeKey('kid-2025-07', caA)])];
    const laterVerifier = staticLoader(afterWindow, { [STATUS_LIST_URL]: statusList });
    expect((await standardVerify(old, laterVerifier)).verified).toBe(false);
    expect((await standardVerify(identity, laterVerifier)).verified).toBe(true);
  });
});

describe('revocation with @digitalbazaar/vc-bitstring-status-list', () => {
  it('reports the bit clear, then set, in results[].status (verified stays true)', async () => {
    const clear = await checkStatus({
      credential: identity,
      documentLoader: verifier,
      suite: new Ed25519Signature2020(),
    });
    expect(clear.error).toBeUndefined();
    expect(clear.verified).toBe(true);
    expect(clear.results?.[0]?.status).toBe(false);

    const revokedList = await signedStatusList([STATUS_INDEX]);
    const revokedVerifier = staticLoader(servedDidDocuments, { [STATUS_LIST_URL]: revokedList });
    const set = await checkStatus({
      credential: identity,
      documentLoader: revokedVerifier,
      suite: new Ed25519Signature2020(),
    });
    // What a verifier must check: the library reports a revoked credential as `verified` with
    // status true; `verified` only says the status list itself verified.
    expect(set.verified).toBe(true);
    expect(set.results?.[0]?.status).toBe(true);
    const whole = await standardVerify(identity, revokedVerifier);
    expect(whole.verified).toBe(true);
    expect((whole.statusResult as { results: Array<{ status: boolean }> }).results[0]?.status).toBe(
      true,
    );
  });

  it('a status list signed by another tenant fails the status check', async () => {
    const list = await createList({ length: LIST_LENGTH });
    const foreign = await signCredential(
      statusListCredentialDocument({
        url: STATUS_LIST_URL,
        tenantId: TENANT_B,
        issuedAt: ISSUED,
        encodedList: await list.encode(),
      }),
      { verificationMethod: tenantVerificationMethodId(TENANT_B), key: caB },
      gatewayLoader,
    );
    const result = await checkStatus({
      credential: identity,
      documentLoader: staticLoader(servedDidDocuments, { [STATUS_LIST_URL]: foreign }),
      suite: new Ed25519Signature2020(),
    });
    expect(result.verified).toBe(false);
  });
});

describe('verifyCredentialProof judges the proof only', () => {
  it('an expired or not yet valid credential still has a valid proof (the chain rules judge dates)', async () => {
    const afterExpiry = new Date('2025-07-05T00:00:00.000Z');
    expect((await standardVerify(identity, verifier, afterExpiry)).verified).toBe(false);
    await expect(verifyCredentialProof(identity, gatewayLoader)).resolves.toEqual({
      verified: true,
    });
  });

  it('names the problem of a credential without a usable proof or issuanceDate', async () => {
    const { proof: _proof, ...unsigned } = identity;
    await expect(verifyCredentialProof(unsigned, gatewayLoader)).resolves.toEqual({
      verified: false,
      reason: 'the credential must carry exactly one proof',
    });
    const undated = tampered(identity, (c) => {
      c.issuanceDate = 'yesterday';
    });
    await expect(verifyCredentialProof(undated, gatewayLoader)).resolves.toEqual({
      verified: false,
      reason: 'issuanceDate is not a date-time',
    });
  });
});

describe('cost', () => {
  it('measures one sign and one verify with warm context caches', async () => {
    const runs = 20;
    let started = performance.now();
    for (let run = 0; run < runs; run++)
      await signCredential(identityDocument(), byCaA, gatewayLoader);
    const signMs = (performance.now() - started) / runs;
    started = performance.now();
    for (let run = 0; run < runs; run++) {
      const result = await verifyCredentialProof(identity, gatewayLoader);
      expect(result.verified).toBe(true);
    }
    const verifyMs = (performance.now() - started) / runs;
    console.log(
      `AgentIAM identity credential: sign ${signMs.toFixed(2)} ms, verifyCredentialProof ${verifyMs.toFixed(2)} ms (mean of ${runs}, warm)`,
    );
  });
});
