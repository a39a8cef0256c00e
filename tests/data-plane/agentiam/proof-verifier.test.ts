// The data plane's proof cache: a credential checked once is answered from the cache by the
// SHA-256 of its JSON text, concurrent checks of one credential share one canonicalization, a
// changed credential is checked again, and the cache never holds more than its size.
import { describe, expect, it } from 'vitest';
import { ProofVerifier } from '../../../data-plane/agentiam/proof-verifier.js';
import { createGatewayMetrics } from '../../../data-plane/metrics/gateway-metrics.js';
import { compileSnapshot } from '../../../data-plane/store/compiled-snapshot.js';
import {
  delegationCredentialDocument,
  signCredential,
} from '../../../shared/agentiam/credentials.js';
import { agentVerificationMethodId } from '../../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../../shared/agentiam/document-loader.js';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import { makeSnapshot, makeTenant } from '../../shared/snapshot/snapshot-fixture.js';

async function link(tools: string[]): Promise<Record<string, unknown>> {
  const from = generateEd25519KeyMaterial();
  const issuedAt = new Date('2026-11-01T00:00:00Z');
  return signCredential(
    delegationCredentialDocument({
      id: crypto.randomUUID(),
      tenantId: 't',
      delegatorPublicKey: from.publicKeyMultibase,
      delegatorAgentId: 'a',
      delegatePublicKey: generateEd25519KeyMaterial().publicKeyMultibase,
      delegateAgentId: 'b',
      permittedTools: tools,
      issuedAt,
      expiresAt: new Date(issuedAt.getTime() + 3600_000),
    }),
    { verificationMethod: agentVerificationMethodId(from.publicKeyMultibase), key: from },
    createDocumentLoader(() => null),
  );
}

async function counts(metrics: ReturnType<typeof createGatewayMetrics>) {
  const values = (await metrics.credentialProofChecks.get()).values;
  const of = (cache: string, result: string) =>
    values.find((v) => v.labels.cache === cache && v.labels.result === result)?.value ?? 0;
  return {
    hitVerified: of('hit', 'verified'),
    missVerified: of('miss', 'verified'),
    missFailed: of('miss', 'failed'),
  };
}

describe('ProofVerifier', () => {
  const snapshot = compileSnapshot(makeSnapshot(1, [makeTenant('t')]));

  it('checks a credential once; repeats and concurrent checks come from the cache', async () => {
    const metrics = createGatewayMetrics({ defaultMetrics: false });
    const verifier = new ProofVerifier({ metrics });
    const vc = await link(['read']);
    const results = await Promise.all([
      verifier.verify(snapshot, vc),
      verifier.verify(snapshot, vc),
      verifier.verify(snapshot, structuredClone(vc)),
    ]);
    expect(results).toEqual([{ verified: true }, { verified: true }, { verified: true }]);
    expect(await verifier.verify(snapshot, vc)).toEqual({ verified: true });
    expect(await counts(metrics)).toEqual({ hitVerified: 3, missVerified: 1, missFailed: 0 });
  });

  it('checks a changed credential again, and caches the failure too', async () => {
    const metrics = createGatewayMetrics({ defaultMetrics: false });
    const verifier = new ProofVerifier({ metrics });
    const vc = await link(['read']);
    const subject = vc.credentialSubject as Record<string, unknown>;
    const changed = { ...vc, credentialSubject: { ...subject, permittedTools: ['*'] } };
    expect(await verifier.verify(snapshot, vc)).toEqual({ verified: true });
    expect((await verifier.verify(snapshot, changed)).verified).toBe(false);
    expect((await verifier.verify(snapshot, changed)).verified).toBe(false);
    expect(await counts(metrics)).toEqual({ hitVerified: 0, missVerified: 1, missFailed: 1 });
  });

  it('holds at most its size, dropping the least recently used', async () => {
    const metrics = createGatewayMetrics({ defaultMetrics: false });
    const verifier = new ProofVerifier({ metrics, cacheSize: 2 });
    const [a, b, c] = await Promise.all([link(['a']), link(['b']), link(['c'])]);
    await verifier.verify(snapshot, a as Record<string, unknown>);
    await verifier.verify(snapshot, b as Record<string, unknown>);
    await verifier.verify(snapshot, a as Record<string, unknown>); // a is now the most recent
    await verifier.verify(snapshot, c as Record<string, unknown>); // b goes
    expect(verifier.size).toBe(2);
    await verifier.verify(snapshot, a as Record<string, unknown>);
    expect(await counts(metrics)).toMatchObject({ hitVerified: 2, missVerified: 3 });
    await verifier.verify(snapshot, b as Record<string, unknown>);
    expect(await counts(metrics)).toMatchObject({ hitVerified: 2, missVerified: 4 });
  });

  it('refuses a credential over the size bound without canonicalizing it', async () => {
    const verifier = new ProofVerifier({
      metrics: createGatewayMetrics({ defaultMetrics: false }),
    });
    const vc = await link(['read']);
    const huge = { ...vc, padding: 'x'.repeat(70 * 1024) };
    expect(await verifier.verify(snapshot, huge)).toMatchObject({ verified: false });
    expect(verifier.size).toBe(0);
  });
});
