// POST /api/v1/agentiam/delegation/verify end to end: credentials issued by the control plane's
// service, links signed by the agents' own keys (and one by Digital Bazaar's library alone),
// verified by the data plane against the snapshot. Chains of depth 0 to 6 verify; each rule,
// broken once, names its registry code and the first failing hop; a malformed body is 400
// REQUEST_INVALID naming the field; a credential signed by a CA key retired by a rotation still
// verifies within its window; repeated proofs are answered from the cache.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { Ed25519VerificationKey2020 } from '@digitalbazaar/ed25519-verification-key-2020';
import { issue } from '@digitalbazaar/vc';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueIdentityCredential } from '../../../control-plane/services/agentiam/credentials.js';
import { generateEd25519KeyMaterial } from '../../../shared/agentiam/ed25519-keys.js';
import { asAgentId } from '../../../shared/ids.js';
import {
  addKeyedAgent,
  agentIamServices,
  delegate,
  issueCredential,
  type KeyedAgent,
  revokeCredential,
  rotateTenantKey,
  verifyChainOverHttp,
} from '../../support/agentiam-client.js';
import { describeEachDatabase } from '../../support/databases.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { killAgent } from '../inspect/support.js';

const ROOT_TOOLS = ['read', 'search', 'write'];

/** A static JSON-LD loader over the committed contexts and did:key, built without our code. */
function independentLoader() {
  const index = JSON.parse(readFileSync('schema/contexts/index.json', 'utf8')) as Record<
    string,
    string
  >;
  const contexts = new Map(
    Object.entries(index).map(([uri, file]) => [
      uri,
      JSON.parse(readFileSync(`schema/contexts/${file}`, 'utf8')) as unknown,
    ]),
  );
  return async (url: string) => {
    const document = contexts.get(url);
    if (document === undefined) throw new Error(`no document ${url}`);
    return { contextUrl: null, documentUrl: url, document };
  };
}

/** A delegation link made with @digitalbazaar/vc `issue` and Ed25519Signature2020 directly. */
async function delegateWithLibrary(
  tenantId: string,
  from: KeyedAgent,
  to: KeyedAgent,
  tools: string[],
): Promise<Record<string, unknown>> {
  const fromDid = `did:key:${from.key.publicKeyMultibase}`;
  const key = await Ed25519VerificationKey2020.generate({
    seed: from.key.secretKey,
    id: `${fromDid}#${from.key.publicKeyMultibase}`,
    controller: fromDid,
  });
  const issued = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
  const iso = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;
  return issue({
    credential: {
      '@context': [
        'https://www.w3.org/2018/credentials/v1',
        'https://w3id.org/security/suites/ed25519-2020/v1',
        'https://agent-gateway.dev/contexts/agentiam/v1',
      ],
      id: `urn:uuid:${randomUUID()}`,
      type: ['VerifiableCredential', 'AgentDelegationCredential'],
      issuer: fromDid,
      issuanceDate: iso(issued),
      expirationDate: iso(new Date(issued.getTime() + 1800_000)),
      credentialSubject: {
        id: `did:key:${to.key.publicKeyMultibase}`,
        tenantId,
        agentId: to.id,
        delegatorAgentId: from.id,
        permittedTools: tools,
      },
    },
    suite: new Ed25519Signature2020({ key, date: iso(issued) }),
    documentLoader: independentLoader(),
  });
}

describeEachDatabase('POST /api/v1/agentiam/delegation/verify', (kind) => {
  let gateway: TestGateway;
  let tenantId: string;
  /** agents[0] holds the root credential; agents[i] is the i-th delegate. */
  let agents: KeyedAgent[];
  let root: Record<string, unknown>;
  /** links[i] delegates from agents[i] to agents[i+1]: read and write. */
  let links: Record<string, unknown>[];
  /** Every link expires then unless a test says otherwise: later links never outlive earlier ones. */
  let linkExpiry: Date;
  const link = (options: Omit<Parameters<typeof delegate>[0], 'tenantId'>) =>
    delegate({ tenantId, expiresAt: linkExpiry, ...options });

  const body = (chain: readonly unknown[], tool = 'read', rootCredential: unknown = root) => ({
    root_credential: rootCredential,
    delegation_chain: chain,
    requested_tool: tool,
  });
  const expectFailure = async (
    request: unknown,
    failure: { hop: number; code: string },
    key?: string,
  ) => {
    const answer = await verifyChainOverHttp(gateway, request, key);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ valid: false, failure });
    expect(typeof (answer.body.failure as { message: unknown }).message).toBe('string');
    return answer.body;
  };

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    tenantId = gateway.tenant.id;
    await gateway.setPolicy(tenantId, { maxDelegationDepth: 6 });
    agents = [await addKeyedAgent(gateway, tenantId, { allowedTools: ROOT_TOOLS })];
    for (let i = 1; i <= 7; i++) agents.push(await addKeyedAgent(gateway, tenantId));
    root = await issueCredential(gateway, agents[0]!);
    linkExpiry = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    links = [];
    for (let i = 0; i < 7; i++) {
      links.push(await link({ from: agents[i]!, to: agents[i + 1]!, tools: ['read', 'write'] }));
    }
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('verifies chains of depth 0 to 6, naming the last agent, its tools and the path', async () => {
    for (let depth = 0; depth <= 6; depth++) {
      const answer = await verifyChainOverHttp(gateway, body(links.slice(0, depth)));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        valid: true,
        depth,
        agentId: agents[depth]!.id,
        permittedTools: depth === 0 ? ROOT_TOOLS : ['read', 'write'],
        chain: agents.slice(0, depth + 1).map((agent) => agent.id),
        failure: null,
      });
    }
  });

  it('accepts a link made with Digital Bazaar’s library alone, outside our code', async () => {
    const link = await delegateWithLibrary(tenantId, agents[1]!, agents[2]!, ['read']);
    const answer = await verifyChainOverHttp(gateway, body([links[0], link]));
    expect(answer.body).toMatchObject({
      valid: true,
      depth: 2,
      agentId: agents[2]!.id,
      permittedTools: ['read'],
      failure: null,
    });
  });

  it('DELEGATION_DEPTH_EXCEEDED: seven links against a limit of six, at hop 7', async () => {
    await expectFailure(body(links.slice(0, 7)), { hop: 7, code: 'DELEGATION_DEPTH_EXCEEDED' });
  });

  it('CREDENTIAL_MALFORMED: a root without its subject (hop 0), a link that is not an object (hop 2)', async () => {
    const { credentialSubject: _subject, ...noSubject } = root;
    await expectFailure(body([], 'read', noSubject), { hop: 0, code: 'CREDENTIAL_MALFORMED' });
    await expectFailure(body([links[0], 'not a credential']), {
      hop: 2,
      code: 'CREDENTIAL_MALFORMED',
    });
  });

  it('CREDENTIAL_SIGNATURE_INVALID: a root with one field changed after signing', async () => {
    const subject = root.credentialSubject as Record<string, unknown>;
    const widened = { ...root, credentialSubject: { ...subject, permittedTools: ['*'] } };
    await expectFailure(body([], 'read', widened), {
      hop: 0,
      code: 'CREDENTIAL_SIGNATURE_INVALID',
    });
    const { proof, ...rest } = root;
    const otherProof = {
      ...rest,
      proof: {
        ...(proof as object),
        proofValue: (links[0]!.proof as { proofValue: string }).proofValue,
      },
    };
    await expectFailure(body([], 'read', otherProof), {
      hop: 0,
      code: 'CREDENTIAL_SIGNATURE_INVALID',
    });
  });

  it("CREDENTIAL_ISSUER_UNTRUSTED: another tenant's credential, presented with this tenant's key", async () => {
    const other = await gateway.addTenant();
    const stranger = await addKeyedAgent(gateway, other.id);
    const foreign = await issueCredential(gateway, stranger);
    await expectFailure(body([], 'read', foreign), { hop: 0, code: 'CREDENTIAL_ISSUER_UNTRUSTED' });
    // The same credential verifies for its own tenant.
    const own = await verifyChainOverHttp(gateway, body([], 'read', foreign), other.key);
    expect(own.body).toMatchObject({ valid: true, agentId: stranger.id });
  });

  it('CREDENTIAL_TENANT_MISMATCH: a link naming another tenant, at hop 1', async () => {
    const foreignLink = await delegate({
      tenantId: randomUUID(),
      from: agents[0]!,
      to: agents[1]!,
      tools: ['read'],
    });
    await expectFailure(body([foreignLink]), { hop: 1, code: 'CREDENTIAL_TENANT_MISMATCH' });
  });

  it("CREDENTIAL_SUBJECT_UNKNOWN: a link to a key that is not the named agent's, at hop 2", async () => {
    const impostor = { id: agents[2]!.id, key: generateEd25519KeyMaterial() };
    const toImpostor = await link({ from: agents[1]!, to: impostor, tools: ['read'] });
    await expectFailure(body([links[0], toImpostor]), {
      hop: 2,
      code: 'CREDENTIAL_SUBJECT_UNKNOWN',
    });
    const ghost = { id: asAgentId(randomUUID()), key: generateEd25519KeyMaterial() };
    const toGhost = await link({ from: agents[1]!, to: ghost, tools: ['read'] });
    await expectFailure(body([links[0], toGhost]), { hop: 2, code: 'CREDENTIAL_SUBJECT_UNKNOWN' });
  });

  it('CREDENTIAL_REVOKED: a revoked root (hop 0), a killed delegate (hop 2)', async () => {
    const holder = await addKeyedAgent(gateway, tenantId);
    const revoked = await issueCredential(gateway, holder);
    expect((await verifyChainOverHttp(gateway, body([], 'read', revoked))).body.valid).toBe(true);
    await revokeCredential(gateway, tenantId, revoked);
    await expectFailure(body([], 'read', revoked), { hop: 0, code: 'CREDENTIAL_REVOKED' });

    const doomed = await addKeyedAgent(gateway, tenantId);
    const toDoomed = await link({ from: agents[1]!, to: doomed, tools: ['read'] });
    expect((await verifyChainOverHttp(gateway, body([links[0], toDoomed]))).body.valid).toBe(true);
    await killAgent(gateway, tenantId, doomed.id);
    await expectFailure(body([links[0], toDoomed]), { hop: 2, code: 'CREDENTIAL_REVOKED' });
  });

  it('DELEGATION_BROKEN_LINK: a link not issued by the previous subject, at hop 2', async () => {
    const skip = await link({ from: agents[0]!, to: agents[2]!, tools: ['read'] });
    await expectFailure(body([links[0], skip]), { hop: 2, code: 'DELEGATION_BROKEN_LINK' });
  });

  it("DELEGATION_SIGNATURE_INVALID: a link signed by a key other than the delegator's, at hop 3", async () => {
    const forged = await link({
      from: agents[2]!,
      to: agents[3]!,
      tools: ['read'],
      signer: generateEd25519KeyMaterial(),
    });
    await expectFailure(body([links[0], links[1], forged]), {
      hop: 3,
      code: 'DELEGATION_SIGNATURE_INVALID',
    });
  });

  it('CREDENTIAL_EXPIRED and CREDENTIAL_NOT_YET_VALID, at the root and on links', async () => {
    const late = await addKeyedAgent(gateway, tenantId);
    const stale = await issueIdentityCredential(
      agentIamServices(gateway),
      { tenantId, agentId: late.id, supervisingUserId: 'test', ttlSeconds: 60, actor: 'test' },
      new Date(Date.now() - 3600_000),
    );
    await gateway.sync();
    await expectFailure(body([], 'read', stale.credential), { hop: 0, code: 'CREDENTIAL_EXPIRED' });
    const hour = 3600_000;
    const expired = await link({
      from: agents[0]!,
      to: agents[1]!,
      tools: ['read'],
      issuedAt: new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * hour),
      expiresAt: new Date(Math.floor(Date.now() / 1000) * 1000 - hour),
    });
    await expectFailure(body([expired]), { hop: 1, code: 'CREDENTIAL_EXPIRED' });
    const future = new Date(Math.floor(Date.now() / 1000) * 1000 + hour);
    const early = await link({
      from: agents[0]!,
      to: agents[1]!,
      tools: ['read'],
      issuedAt: future,
      expiresAt: new Date(future.getTime() + hour),
    });
    await expectFailure(body([early]), { hop: 1, code: 'CREDENTIAL_NOT_YET_VALID' });
  });

  it('DELEGATION_TOOLS_WIDENED: a link granting a tool its delegator lacks, at hop 2', async () => {
    const wider = await link({ from: agents[1]!, to: agents[2]!, tools: ['read', 'search'] });
    await expectFailure(body([links[0], wider]), { hop: 2, code: 'DELEGATION_TOOLS_WIDENED' });
  });

  it('DELEGATION_EXPIRY_NOT_NESTED: a link outliving its root, at hop 1', async () => {
    const shortLived = await addKeyedAgent(gateway, tenantId);
    const brief = await issueCredential(gateway, shortLived, { ttlSeconds: 600 });
    const outliving = await link({
      from: shortLived,
      to: agents[1]!,
      tools: ['read'],
      expiresAt: new Date(Date.now() + 7200_000),
    });
    await expectFailure(body([outliving], 'read', brief), {
      hop: 1,
      code: 'DELEGATION_EXPIRY_NOT_NESTED',
    });
  });

  it('DELEGATION_CYCLE: authority passed back to an agent already in the chain, at hop 2', async () => {
    const back = await link({ from: agents[1]!, to: agents[0]!, tools: ['read'] });
    await expectFailure(body([links[0], back]), { hop: 2, code: 'DELEGATION_CYCLE' });
  });

  it('DELEGATION_TOOL_NOT_PERMITTED: the tool dropped at hop 2 (and absent at the root)', async () => {
    const narrowed = await link({ from: agents[1]!, to: agents[2]!, tools: ['read'] });
    await expectFailure(body([links[0], narrowed], 'write'), {
      hop: 2,
      code: 'DELEGATION_TOOL_NOT_PERMITTED',
    });
    await expectFailure(body([], 'delete'), { hop: 0, code: 'DELEGATION_TOOL_NOT_PERMITTED' });
  });

  it('keeps verifying credentials signed by a retired CA key within its window, not after', async () => {
    const tenant = await gateway.addTenant();
    const holder = await addKeyedAgent(gateway, tenant.id);
    const before = await issueCredential(gateway, holder);
    await rotateTenantKey(gateway, tenant.id);
    const reissued = await gateway.db.prisma.identityCredential.findUniqueOrThrow({
      where: { id: String(before.id) },
    });
    const verify = (credential: unknown) =>
      verifyChainOverHttp(gateway, body([], 'read', credential), tenant.key);
    expect((await verify(before)).body).toMatchObject({ valid: true, agentId: holder.id });
    expect((await verify(reissued.document)).body).toMatchObject({ valid: true });
    // The retired key's window ends: its credentials stop verifying, the re-issued one does not.
    await gateway.db.prisma.$transaction([
      gateway.db.prisma.tenantSigningKey.updateMany({
        where: { tenantId: tenant.id, status: 'retired' },
        data: { resolvableUntil: new Date(Date.now() - 1000) },
      }),
      gateway.db.prisma.tenant.update({
        where: { id: tenant.id },
        data: { configVersion: { increment: 1 } },
      }),
    ]);
    await gateway.sync();
    expect((await verify(before)).body).toMatchObject({
      valid: false,
      failure: { hop: 0, code: 'CREDENTIAL_SIGNATURE_INVALID' },
    });
    expect((await verify(reissued.document)).body).toMatchObject({ valid: true });
  });

  it('answers a repeated chain from the proof cache, and counts both', async () => {
    const metric = async (cache: string) => {
      const text = await gateway.runtime.metrics.registry.getSingleMetricAsString(
        'agent_gateway_agentiam_proof_checks_total',
      );
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith(
            `agent_gateway_agentiam_proof_checks_total{cache="${cache}",result="verified"}`,
          ),
        );
      return Number(line?.split(' ')[1] ?? 0);
    };
    const fresh = await addKeyedAgent(gateway, tenantId);
    const credential = await issueCredential(gateway, fresh);
    const misses = await metric('miss');
    const hits = await metric('hit');
    expect((await verifyChainOverHttp(gateway, body([], 'read', credential))).body.valid).toBe(
      true,
    );
    expect(await metric('miss')).toBe(misses + 1);
    expect((await verifyChainOverHttp(gateway, body([], 'read', credential))).body.valid).toBe(
      true,
    );
    expect(await metric('miss')).toBe(misses + 1);
    expect(await metric('hit')).toBe(hits + 1);
    const chains = await gateway.runtime.metrics.registry.getSingleMetricAsString(
      'agent_gateway_agentiam_chain_verifications_total',
    );
    expect(chains).toMatch(/source="verify",result="valid"\} [1-9]/);
  });

  it('answers 400 REQUEST_INVALID naming the field of a malformed body', async () => {
    const cases: [unknown, string][] = [
      [[], 'the body must be a JSON object, not an array'],
      [{ delegation_chain: [], requested_tool: 'read' }, 'root_credential is required'],
      [{ ...body([]), root_credential: [root] }, 'root_credential must be a JSON object'],
      [{ ...body([]), root_credential: 'vc' }, 'root_credential must be a JSON object'],
      [{ ...body([]), root_credential: null }, 'root_credential must be a JSON object'],
      [{ root_credential: root, requested_tool: 'read' }, 'delegation_chain is required'],
      [{ ...body([]), delegation_chain: {} }, 'delegation_chain must be an array'],
      [
        { ...body(Array.from({ length: 33 }, () => ({}))) },
        'delegation_chain must list at most 32 items',
      ],
      [{ root_credential: root, delegation_chain: [] }, 'requested_tool is required'],
      [{ ...body([]), requested_tool: 7 }, 'requested_tool must be a string, not 7'],
      [{ ...body([]), requested_tool: '' }, 'requested_tool must not be empty'],
      [{ ...body([]), requested_tool: 'x'.repeat(257) }, 'requested_tool must be at most 256'],
      ['{"root_credential":', 'the body is not valid JSON'],
    ];
    for (const [request, message] of cases) {
      const answer = await verifyChainOverHttp(gateway, request);
      expect({ message, status: answer.status, code: answer.body.reasonCode }).toEqual({
        message,
        status: 400,
        code: 'REQUEST_INVALID',
      });
      expect(answer.body.message).toContain(message);
      expect(answer.body.docs).toBe('docs/agentiam.md#verifying-a-chain');
      expect((answer.body.issues as unknown[]).length).toBeGreaterThan(0);
    }
    let deep: unknown = {};
    for (let i = 0; i < 40; i++) deep = { nested: deep };
    const nested = await verifyChainOverHttp(gateway, { ...body([]), root_credential: deep });
    expect(nested.status).toBe(400);
    expect(nested.body.message).toContain('root_credential is nested deeper');
  });

  it('refuses bodies over 256 KiB (413), callers without a key (401) or without agents:execute (403)', async () => {
    const big = await verifyChainOverHttp(gateway, {
      ...body([]),
      padding: 'x'.repeat(300 * 1024),
    });
    expect({ status: big.status, code: big.body.reasonCode }).toEqual({
      status: 413,
      code: 'REQUEST_TOO_LARGE',
    });
    const anonymous = await fetch(`${gateway.url}/api/v1/agentiam/delegation/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body([])),
    });
    expect(anonymous.status).toBe(401);
    const readOnly = await gateway.addApiKey(tenantId, ['agents:manage']);
    const scoped = await verifyChainOverHttp(gateway, body([]), readOnly);
    expect({ status: scoped.status, code: scoped.body.reasonCode }).toEqual({
      status: 403,
      code: 'AUTH_INSUFFICIENT_SCOPE',
    });
  });
});
