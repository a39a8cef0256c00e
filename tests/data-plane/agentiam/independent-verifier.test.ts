// A third party verifies what the gateway issues using only standard tools and what the data
// plane serves publicly: Digital Bazaar's verifyCredential (Ed25519Signature2020) and the
// Bitstring Status List checker, with a static document loader holding the committed contexts and
// the DID documents and status lists fetched over HTTP from our resolver and status-list route.
// Nothing else: no code of ours verifies here.
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { verifyCredential } from '@digitalbazaar/vc';
import { checkStatus } from '@digitalbazaar/vc-bitstring-status-list';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticLoader } from '../../support/agentiam.js';
import {
  addKeyedAgent,
  delegate,
  issueCredential,
  type KeyedAgent,
  revokeCredential,
  rotateTenantKey,
} from '../../support/agentiam-client.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { quickDatabaseKind } from '../inspect/support.js';

interface ThirdPartyVerdict {
  readonly verified: boolean;
  /** The credential's status bit as the status checker read it (true: revoked). */
  readonly revoked: boolean | undefined;
}

describe('an independent verifier accepts what the gateway issues, from what it serves', () => {
  let gateway: TestGateway;
  let agent: KeyedAgent;
  let delegateAgent: KeyedAgent;
  let credential: Record<string, unknown>;

  /** The bare DID document from GET /1.0/identifiers/{did}. */
  async function resolve(did: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${gateway.url}/1.0/identifiers/${encodeURIComponent(did)}`, {
      headers: { accept: 'application/did+ld+json' },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  async function verifyAsThirdParty(vc: Record<string, unknown>): Promise<ThirdPartyVerdict> {
    const issuer = vc.issuer as string;
    const documents = new Map<string, unknown>();
    const status = vc.credentialStatus as { statusListCredential: string } | undefined;
    if (status) {
      const list = await fetch(status.statusListCredential);
      expect(list.status).toBe(200);
      documents.set(status.statusListCredential, await list.json());
    }
    const result = await verifyCredential({
      credential: vc,
      suite: new Ed25519Signature2020(),
      documentLoader: staticLoader([await resolve(issuer)], documents),
      ...(status
        ? { checkStatus: (options: Parameters<typeof checkStatus>[0]) => checkStatus(options) }
        : {}),
    });
    const statusResult = result.statusResult as { results?: { status: boolean }[] } | undefined;
    return { verified: result.verified, revoked: statusResult?.results?.[0]?.status };
  }

  beforeAll(async () => {
    gateway = await startTestGateway(quickDatabaseKind);
    agent = await addKeyedAgent(gateway, gateway.tenant.id, { allowedTools: ['read_file'] });
    delegateAgent = await addKeyedAgent(gateway, gateway.tenant.id);
    credential = await issueCredential(gateway, agent);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('verifies an issued identity credential and reads its status bit as clear', async () => {
    expect(await verifyAsThirdParty(credential)).toEqual({ verified: true, revoked: false });
  });

  it('refuses the credential with one field changed', async () => {
    const subject = credential.credentialSubject as Record<string, unknown>;
    const tampered = { ...credential, credentialSubject: { ...subject, permittedTools: ['*'] } };
    expect((await verifyAsThirdParty(tampered)).verified).toBe(false);
  });

  it('verifies a delegation link against the did:key document our resolver serves', async () => {
    const link = await delegate({
      tenantId: gateway.tenant.id,
      from: agent,
      to: delegateAgent,
      tools: ['read_file'],
    });
    expect(await verifyAsThirdParty(link)).toEqual({ verified: true, revoked: undefined });
  });

  it('sees a revocation in the served status list: the status bit is set', async () => {
    const holder = await addKeyedAgent(gateway, gateway.tenant.id);
    const revocable = await issueCredential(gateway, holder);
    await revokeCredential(gateway, gateway.tenant.id, revocable);
    const verdict = await verifyAsThirdParty(revocable);
    // The library keeps `verified` for the proofs; a verifier must read the status result.
    expect(verdict.revoked).toBe(true);
  });

  it('after a rotation verifies the re-issued credential; the old one only by our own verifier', async () => {
    const tenant = await gateway.addTenant();
    const holder = await addKeyedAgent(gateway, tenant.id);
    const before = await issueCredential(gateway, holder);
    expect((await verifyAsThirdParty(before)).verified).toBe(true);
    await rotateTenantKey(gateway, tenant.id);
    const reissued = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: String(before.id) },
    });
    expect(await verifyAsThirdParty(reissued.document as Record<string, unknown>)).toEqual({
      verified: true,
      revoked: false,
    });
    // Standard verifiers see only the current #agentiam-ca (DESIGN.md §6).
    expect((await verifyAsThirdParty(before)).verified).toBe(false);
  });
});
