// The delegation-chain rules, hop by hop: every rule violated once with its exact code and hop,
// chains of depth 0-6, the first failing hop named when several fail, and properties over random
// chains. Proofs here are real Ed25519 signatures (node:crypto) over the credential's JSON without
// its proof, checked against the issuer's key (the tenant CA for the root, the delegator's did:key
// for a link): the rules are under test; the Ed25519Signature2020 suite is tested with the real
// verifier elsewhere.
import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChainResult,
  type DelegationChainDependencies,
  verifyDelegationChain,
} from '../../../shared/agentiam/delegation-chain.js';
import {
  decodeEd25519PublicKey,
  encodeEd25519PublicKey,
} from '../../../shared/identity/ed25519-multibase.js';
import { propertyRuns } from '../../support/property-runs.js';

const TENANT = '0b6b7a2e-3f1c-4d2a-9c1e-5f3a2b1c0d9e';
const OTHER_TENANT = '9f1e2d3c-4b5a-4968-8776-655443322110';
const TENANT_DID = `did:svc:${TENANT}`;
const CA_METHOD = `${TENANT_DID}#agentiam-ca`;
const CA = generateKeyPairSync('ed25519');
const STATUS_LIST = `https://gateway.example/api/v1/agentiam/status-lists/${randomUUID()}`;
const NOW = new Date('2026-11-24T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface TestAgent {
  readonly id: string;
  readonly z6Mk: string;
  readonly did: string;
  readonly privateKey: KeyObject;
}

function makeAgent(id: string): TestAgent {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  const z6Mk = encodeEd25519PublicKey(Buffer.from(x, 'base64url'));
  return { id, z6Mk, did: `did:key:${z6Mk}`, privateKey };
}

const AGENTS = Array.from({ length: 9 }, (_, index) => makeAgent(`agent-${index}`));
const STRANGER = makeAgent('agent-stranger');

function agent(index: number): TestAgent {
  return AGENTS[index] as TestAgent;
}

// ---------------------------------------------------------------------------------------------
// Credentials

interface HopSpec {
  /** The subject: an index into AGENTS. */
  readonly agent: number;
  readonly tools: readonly string[];
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
  readonly tenantId?: string;
  readonly issuer?: string;
  readonly delegatorAgentId?: string;
  readonly subjectId?: string;
  readonly type?: readonly string[];
  /** The status-list index (roots have one by default); null for none. */
  readonly status?: number | null;
  /** Sign with this agent's key (and its did:key method) instead of the rightful issuer's. */
  readonly signWith?: TestAgent;
  /** Change the signed credential, without signing again. */
  readonly tamper?: (vc: Record<string, unknown>) => void;
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function signed(
  vc: Record<string, unknown>,
  key: KeyObject,
  verificationMethod: string,
): Record<string, unknown> {
  const proofValue = sign(null, Buffer.from(JSON.stringify(vc)), key).toString('base64url');
  return {
    ...vc,
    proof: { type: 'TestEd25519', proofPurpose: 'assertionMethod', verificationMethod, proofValue },
  };
}

function credentialOf(spec: HopSpec, index: number, previous: HopSpec | undefined) {
  const subject = agent(spec.agent);
  const status = spec.status === undefined ? (index === 0 ? 1000 + spec.agent : null) : spec.status;
  const credential: Record<string, unknown> = {
    '@context': ['https://www.w3.org/2018/credentials/v1'],
    id: `urn:uuid:${randomUUID()}`,
    type: spec.type ?? [
      'VerifiableCredential',
      index === 0 ? 'AgentIdentityCredential' : 'AgentDelegationCredential',
    ],
    issuer: spec.issuer ?? (previous === undefined ? TENANT_DID : agent(previous.agent).did),
    issuanceDate: iso(spec.issuedAt ?? new Date(NOW.getTime() - HOUR + index * MINUTE)),
    expirationDate: iso(spec.expiresAt ?? new Date(NOW.getTime() + 24 * HOUR - index * MINUTE)),
    credentialSubject: {
      id: spec.subjectId ?? subject.did,
      tenantId: spec.tenantId ?? TENANT,
      agentId: subject.id,
      ...(previous === undefined
        ? { nonTransferable: true, supervisingUserId: 'user-1' }
        : { delegatorAgentId: spec.delegatorAgentId ?? agent(previous.agent).id }),
      permittedTools: [...spec.tools],
    },
  };
  if (status !== null) {
    credential.credentialStatus = {
      id: `${STATUS_LIST}#${status}`,
      type: 'BitstringStatusListEntry',
      statusPurpose: 'revocation',
      statusListIndex: String(status),
      statusListCredential: STATUS_LIST,
    };
  }
  const vc =
    spec.signWith !== undefined
      ? signed(credential, spec.signWith.privateKey, `${spec.signWith.did}#${spec.signWith.z6Mk}`)
      : previous === undefined
        ? signed(credential, CA.privateKey, CA_METHOD)
        : signed(
            credential,
            agent(previous.agent).privateKey,
            `${agent(previous.agent).did}#${agent(previous.agent).z6Mk}`,
          );
  spec.tamper?.(vc);
  return vc;
}

function buildChain(hops: readonly HopSpec[]) {
  const credentials = hops.map((spec, index) => credentialOf(spec, index, hops[index - 1]));
  return { rootCredential: credentials[0], chain: credentials.slice(1) };
}

const SETS = [
  ['search', 'read', 'write', 'delete'],
  ['search', 'read', 'write'],
  ['search', 'read'],
];

/** A valid chain: agents 0..depth, tool sets narrowing to ['search']. */
function validHops(depth: number): HopSpec[] {
  return Array.from({ length: depth + 1 }, (_, index) => ({
    agent: index,
    tools: SETS[index] ?? ['search'],
  }));
}

function withHop(hops: readonly HopSpec[], index: number, change: Partial<HopSpec>): HopSpec[] {
  return hops.map((spec, at) => (at === index ? { ...spec, ...change } : spec));
}

// ---------------------------------------------------------------------------------------------
// The rules' dependencies

function publicKeyOfMethod(method: string): KeyObject | undefined {
  if (method === CA_METHOD) return CA.publicKey;
  const match = /^did:key:(z6Mk[1-9A-HJ-NP-Za-km-z]+)#\1$/.exec(method);
  const raw = match === null ? undefined : decodeEd25519PublicKey(match[1] as string);
  if (raw === undefined) return undefined;
  const x = Buffer.from(raw).toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

interface TestWorld {
  readonly deps: DelegationChainDependencies;
  /** Indexes of the hops whose proofs were checked, in order. */
  readonly proofsChecked: string[];
}

function world(options: { killed?: string[]; revoked?: number[]; knownList?: boolean } = {}) {
  const killed = new Set(options.killed ?? []);
  const revoked = new Set(options.revoked ?? []);
  const proofsChecked: string[] = [];
  const registered = new Map([...AGENTS, STRANGER].map((each) => [each.id, each.z6Mk]));
  const deps: DelegationChainDependencies = {
    async verifyProof(vc) {
      const { proof, ...rest } = vc as {
        proof: { verificationMethod: string; proofValue: string };
        issuer: unknown;
        credentialSubject: { agentId: string };
      };
      proofsChecked.push(rest.credentialSubject.agentId);
      if (!proof.verificationMethod.startsWith(`${String(rest.issuer)}#`)) {
        return { verified: false, reason: 'the verification method is not the issuer key' };
      }
      const key = publicKeyOfMethod(proof.verificationMethod);
      if (key === undefined) return { verified: false, reason: 'unknown verification method' };
      const ok = verify(
        null,
        Buffer.from(JSON.stringify(rest)),
        key,
        Buffer.from(proof.proofValue, 'base64url'),
      );
      return ok ? { verified: true } : { verified: false, reason: 'the signature does not match' };
    },
    trustedIssuer: (did) => did === TENANT_DID,
    isRevoked: ({ statusListCredential, statusListIndex }) =>
      statusListCredential === STATUS_LIST && options.knownList !== false
        ? revoked.has(statusListIndex)
        : null,
    agent: (agentId) => {
      const publicKey = registered.get(agentId);
      if (publicKey === undefined) return null;
      return { publicKey, status: killed.has(agentId) ? 'killed' : 'active' };
    },
  };
  return { deps, proofsChecked } satisfies TestWorld;
}

async function check(
  hops: readonly HopSpec[],
  options: { requestedTool?: string; maxDepth?: number; world?: TestWorld } = {},
): Promise<ChainResult> {
  const { rootCredential, chain } = buildChain(hops);
  return verifyDelegationChain(
    {
      tenantId: TENANT,
      rootCredential,
      chain,
      requestedTool: options.requestedTool ?? 'search',
      maxDepth: options.maxDepth ?? 6,
      now: NOW,
    },
    (options.world ?? world()).deps,
  );
}

// ---------------------------------------------------------------------------------------------

describe('a valid chain', () => {
  it.each([0, 1, 2, 3, 4, 5, 6])('of depth %i verifies, naming the last agent', async (depth) => {
    const result = await check(validHops(depth));
    expect(result).toEqual({
      valid: true,
      depth,
      agentId: agent(depth).id,
      permittedTools: SETS[depth] ?? ['search'],
      chain: AGENTS.slice(0, depth + 1).map((each) => each.id),
      failure: null,
    });
  });

  it('accepts an issuer written as an object with an id', async () => {
    const hops = validHops(1);
    const { rootCredential, chain } = buildChain(hops);
    const root = rootCredential as Record<string, unknown>;
    const { proof: _proof, ...unsigned } = root;
    const reissued = signed({ ...unsigned, issuer: { id: TENANT_DID } }, CA.privateKey, CA_METHOD);
    const deps = world().deps;
    const result = await verifyDelegationChain(
      {
        tenantId: TENANT,
        rootCredential: reissued,
        chain,
        requestedTool: 'read',
        maxDepth: 2,
        now: NOW,
      },
      { ...deps, verifyProof: async () => ({ verified: true }) },
    );
    expect(result.valid).toBe(true);
  });

  it('under a root with every tool (*), lets links list any tools, and * below *', async () => {
    const hops: HopSpec[] = [
      { agent: 0, tools: ['*'] },
      { agent: 1, tools: ['*'] },
      { agent: 2, tools: ['deploy', 'search'] },
    ];
    expect((await check(hops, { requestedTool: 'deploy' })).valid).toBe(true);
    expect((await check(hops.slice(0, 2), { requestedTool: 'anything' })).permittedTools).toEqual([
      '*',
    ]);
  });

  it('is valid at the instants of issuanceDate and expirationDate', async () => {
    const atIssue = await check(withHop(validHops(0), 0, { issuedAt: NOW }));
    const atExpiry = await check(withHop(validHops(1), 1, { expiresAt: NOW }));
    expect([atIssue.valid, atExpiry.valid]).toEqual([true, true]);
  });

  it('may end with a link that expires exactly when the previous hop does', async () => {
    const expiresAt = new Date(NOW.getTime() + HOUR);
    const hops = withHop(withHop(validHops(2), 1, { expiresAt }), 2, { expiresAt });
    expect((await check(hops)).valid).toBe(true);
  });
});

/** The failure expected; a RegExp message where the text holds a random credential id. */
type Expected = { hop: number; code: string; message: string | RegExp };

function expectFailure(result: ChainResult, { hop, code, message }: Expected) {
  expect(result.valid).toBe(false);
  expect(result.failure).toMatchObject({ hop, code });
  if (typeof message === 'string') expect(result.failure?.message).toBe(message);
  else expect(result.failure?.message).toMatch(message);
  expect([result.agentId, result.permittedTools, result.chain]).toEqual([null, [], []]);
}

function revokedAt(hop: number): RegExp {
  return new RegExp(`^hop ${hop}: credential urn:uuid:[0-9a-f-]{36} is revoked$`);
}

describe('each rule, violated once, fails with its code at its hop', () => {
  const hops = validHops(3);

  it('CREDENTIAL_MALFORMED: a root that is not an object', async () => {
    const result = await verifyDelegationChain(
      {
        tenantId: TENANT,
        rootCredential: 'vc',
        chain: [],
        requestedTool: 'x',
        maxDepth: 1,
        now: NOW,
      },
      world().deps,
    );
    expect(result.failure).toMatchObject({ hop: 0, code: 'CREDENTIAL_MALFORMED' });
    expect(result.failure?.message).toMatch(/^hop 0: credential is malformed: /);
  });

  it.each<[string, number, Partial<HopSpec>, string]>([
    [
      'a delegation credential as the root',
      0,
      { type: ['VerifiableCredential', 'AgentDelegationCredential'] },
      'type: must list VerifiableCredential and AgentIdentityCredential',
    ],
    [
      'an identity credential as a link',
      2,
      { type: ['VerifiableCredential', 'AgentIdentityCredential'] },
      'type: must list VerifiableCredential and AgentDelegationCredential',
    ],
    [
      'a link without delegatorAgentId',
      1,
      { delegatorAgentId: '' },
      'credentialSubject.delegatorAgentId',
    ],
    [
      'a tool that is not a string',
      3,
      { tools: ['search', 7 as unknown as string] },
      'credentialSubject.permittedTools[1]',
    ],
    [
      'an issuanceDate that is not a date',
      2,
      {
        tamper: (vc) => {
          vc.issuanceDate = 'yesterday';
        },
      },
      'issuanceDate: must be an ISO 8601 date-time',
    ],
    [
      'no expirationDate',
      0,
      {
        tamper: (vc) => {
          delete vc.expirationDate;
        },
      },
      'expirationDate',
    ],
    [
      'no proof',
      1,
      {
        tamper: (vc) => {
          delete vc.proof;
        },
      },
      'proof',
    ],
    [
      'a numeric statusListIndex',
      0,
      {
        tamper: (vc) => {
          (vc.credentialStatus as Record<string, unknown>).statusListIndex = 5;
        },
      },
      'credentialStatus.statusListIndex',
    ],
    [
      'a suspension status',
      0,
      {
        tamper: (vc) => {
          (vc.credentialStatus as Record<string, unknown>).statusPurpose = 'suspension';
        },
      },
      'credentialStatus.statusPurpose',
    ],
  ])('CREDENTIAL_MALFORMED: %s', async (_name, hop, change, problem) => {
    const result = await check(withHop(hops, hop, change));
    expect(result.failure).toMatchObject({ hop, code: 'CREDENTIAL_MALFORMED' });
    expect(result.failure?.message).toContain(`hop ${hop}: credential is malformed: `);
    expect(result.failure?.message).toContain(problem);
  });

  it.each<
    [
      string,
      number,
      Partial<HopSpec>,
      { killed?: string[]; revoked?: number[]; knownList?: boolean },
      Expected,
    ]
  >([
    [
      "an issuer that is not the tenant's CA",
      0,
      { issuer: `did:svc:${OTHER_TENANT}` },
      {},
      {
        hop: 0,
        code: 'CREDENTIAL_ISSUER_UNTRUSTED',
        message: `hop 0: issuer did:svc:${OTHER_TENANT} is not the caller's tenant CA`,
      },
    ],
    [
      'a root of another tenant',
      0,
      { tenantId: OTHER_TENANT },
      {},
      {
        hop: 0,
        code: 'CREDENTIAL_TENANT_MISMATCH',
        message: `hop 0: credential names tenant ${OTHER_TENANT}, not the caller tenant`,
      },
    ],
    [
      'a link of another tenant',
      2,
      { tenantId: OTHER_TENANT },
      {},
      {
        hop: 2,
        code: 'CREDENTIAL_TENANT_MISMATCH',
        message: `hop 2: credential names tenant ${OTHER_TENANT}, not the caller tenant`,
      },
    ],
    [
      "a subject that is not the agent's registered key",
      1,
      { subjectId: STRANGER.did },
      {},
      {
        hop: 1,
        code: 'CREDENTIAL_SUBJECT_UNKNOWN',
        message: `hop 1: ${STRANGER.did} is not the registered key of agent agent-1 in this tenant`,
      },
    ],
    [
      'a killed agent',
      2,
      {},
      { killed: ['agent-2'] },
      { hop: 2, code: 'CREDENTIAL_REVOKED', message: revokedAt(2) },
    ],
    [
      'a revoked root',
      0,
      { status: 42 },
      { revoked: [42] },
      { hop: 0, code: 'CREDENTIAL_REVOKED', message: revokedAt(0) },
    ],
    [
      'a revoked link (a link may carry a status)',
      3,
      { status: 43 },
      { revoked: [43] },
      { hop: 3, code: 'CREDENTIAL_REVOKED', message: revokedAt(3) },
    ],
    [
      'a status list the gateway does not know (fail closed)',
      0,
      {},
      { knownList: false },
      { hop: 0, code: 'CREDENTIAL_REVOKED', message: revokedAt(0) },
    ],
    [
      'a link issued by someone other than the previous subject',
      2,
      { issuer: STRANGER.did, signWith: STRANGER },
      {},
      {
        hop: 2,
        code: 'DELEGATION_BROKEN_LINK',
        message: `hop 2: issuer ${STRANGER.did} is not the previous subject ${agent(1).did}`,
      },
    ],
    [
      'a link naming another delegator agent',
      1,
      { delegatorAgentId: 'agent-7' },
      {},
      {
        hop: 1,
        code: 'DELEGATION_BROKEN_LINK',
        message: 'hop 1: issuer agent agent-7 is not the previous subject agent agent-0',
      },
    ],
    [
      "a root not signed by the tenant's CA",
      0,
      {
        tamper: (vc) => {
          vc.id = `urn:uuid:${randomUUID()}`;
        },
      },
      {},
      {
        hop: 0,
        code: 'CREDENTIAL_SIGNATURE_INVALID',
        message: 'hop 0: the proof does not verify: the signature does not match',
      },
    ],
    [
      "a link not signed by the delegator's key",
      2,
      { signWith: STRANGER },
      {},
      {
        hop: 2,
        code: 'DELEGATION_SIGNATURE_INVALID',
        message:
          "hop 2: the link is not signed by the delegator's key: the verification method is not the issuer key",
      },
    ],
    [
      'a root not valid yet',
      0,
      { issuedAt: new Date(NOW.getTime() + 61_000) },
      {},
      {
        hop: 0,
        code: 'CREDENTIAL_NOT_YET_VALID',
        message: `hop 0: credential is valid only from ${iso(new Date(NOW.getTime() + 61_000))}`,
      },
    ],
    [
      'an expired link',
      3,
      { expiresAt: new Date(NOW.getTime() - 1000) },
      {},
      {
        hop: 3,
        code: 'CREDENTIAL_EXPIRED',
        message: `hop 3: credential expired at ${iso(new Date(NOW.getTime() - 1000))}`,
      },
    ],
    [
      'a link that adds a tool',
      2,
      { tools: ['search', 'read', 'delete'] },
      {},
      {
        hop: 2,
        code: 'DELEGATION_TOOLS_WIDENED',
        message: 'hop 2: delegates tools the delegator does not have: delete',
      },
    ],
    [
      'a link that brings * below a finite set',
      1,
      { tools: ['*'] },
      {},
      {
        hop: 1,
        code: 'DELEGATION_TOOLS_WIDENED',
        message: 'hop 1: delegates tools the delegator does not have: *',
      },
    ],
    [
      'a link that outlives the previous hop',
      2,
      { expiresAt: new Date(NOW.getTime() + 48 * HOUR) },
      {},
      {
        hop: 2,
        code: 'DELEGATION_EXPIRY_NOT_NESTED',
        message: `hop 2: expires at ${iso(new Date(NOW.getTime() + 48 * HOUR))}, after the previous hop (${new Date(NOW.getTime() + 24 * HOUR - MINUTE).toISOString()})`,
      },
    ],
    [
      'a root without the requested tool',
      0,
      { tools: ['read'] },
      {},
      {
        hop: 0,
        code: 'DELEGATION_TOOL_NOT_PERMITTED',
        message: 'hop 0: tool search is not in the delegated set',
      },
    ],
  ])('%s', async (_name, hop, change, worldOptions, expected) => {
    const result = await check(withHop(hops, hop, change), { world: world(worldOptions) });
    expectFailure(result, expected);
  });

  it('DELEGATION_TOOL_NOT_PERMITTED: a link that drops the requested tool', async () => {
    const result = await check(withHop(hops, 2, { tools: ['read'] }), { requestedTool: 'search' });
    // Hop 3 lists search again, but hop 2 is named first.
    expectFailure(result, {
      hop: 2,
      code: 'DELEGATION_TOOL_NOT_PERMITTED',
      message: 'hop 2: tool search is not in the delegated set',
    });
  });

  it('DELEGATION_CYCLE: a chain that returns to an agent', async () => {
    const cycle: HopSpec[] = [
      { agent: 0, tools: ['search'] },
      { agent: 1, tools: ['search'] },
      { agent: 0, tools: ['search'] },
    ];
    expectFailure(await check(cycle), {
      hop: 2,
      code: 'DELEGATION_CYCLE',
      message: 'hop 2: agent agent-0 appears twice in the chain',
    });
  });

  it('DELEGATION_DEPTH_EXCEEDED: at the first hop past the limit, with no proof checked', async () => {
    const tested = world();
    const result = await check(validHops(7), { maxDepth: 6, world: tested });
    expect(result.depth).toBe(7);
    expectFailure(result, {
      hop: 7,
      code: 'DELEGATION_DEPTH_EXCEEDED',
      message: 'hop 7: chain depth 7 exceeds the tenant limit 6',
    });
    expect(tested.proofsChecked).toEqual([]);
  });

  it('DELEGATION_DEPTH_EXCEEDED: any link when the limit is 0', async () => {
    const result = await check(validHops(1), { maxDepth: 0 });
    expect(result.failure).toMatchObject({ hop: 1, code: 'DELEGATION_DEPTH_EXCEEDED' });
    expect((await check(validHops(0), { maxDepth: 0 })).valid).toBe(true);
  });

  it('DELEGATION_DEPTH_EXCEEDED: an overlong chain of garbage is refused unread', async () => {
    const tested = world();
    const result = await verifyDelegationChain(
      {
        tenantId: TENANT,
        rootCredential: null,
        chain: Array.from({ length: 10_000 }, () => ({})),
        requestedTool: 'x',
        maxDepth: 5,
        now: NOW,
      },
      tested.deps,
    );
    expect(result.failure).toMatchObject({ hop: 6, code: 'DELEGATION_DEPTH_EXCEEDED' });
  });
});

describe('the first failing hop is named', () => {
  it('when two hops fail, the earlier one', async () => {
    let hops = withHop(validHops(4), 1, { expiresAt: new Date(NOW.getTime() + 48 * HOUR) });
    hops = withHop(hops, 3, { delegatorAgentId: 'agent-8' });
    expect((await check(hops)).failure).toMatchObject({
      hop: 1,
      code: 'DELEGATION_EXPIRY_NOT_NESTED',
    });
  });

  it('a bad proof before a hop that fails a cheaper rule', async () => {
    const tested = world();
    let hops = withHop(validHops(4), 1, { signWith: STRANGER });
    hops = withHop(hops, 3, { tenantId: OTHER_TENANT });
    expect((await check(hops, { world: tested })).failure).toMatchObject({
      hop: 1,
      code: 'DELEGATION_SIGNATURE_INVALID',
    });
    expect(tested.proofsChecked).toEqual(['agent-0', 'agent-1']);
  });

  it("a hop's bad proof before its own later rules (dates, tools, cycle)", async () => {
    const hops = withHop(validHops(2), 2, {
      signWith: STRANGER,
      expiresAt: new Date(NOW.getTime() - 1000),
      tools: ['delete'],
    });
    expect((await check(hops)).failure).toMatchObject({
      hop: 2,
      code: 'DELEGATION_SIGNATURE_INVALID',
    });
  });

  it("a hop's broken link before its bad proof, whose proof is then never checked", async () => {
    const tested = world();
    const hops = withHop(validHops(3), 2, { delegatorAgentId: 'agent-8', signWith: STRANGER });
    expect((await check(hops, { world: tested })).failure).toMatchObject({
      hop: 2,
      code: 'DELEGATION_BROKEN_LINK',
    });
    expect(tested.proofsChecked).toEqual(['agent-0', 'agent-1']);
  });

  it('proofs are checked in hop order, up to and including the failing hop', async () => {
    const tested = world();
    const hops = withHop(validHops(5), 3, { expiresAt: new Date(NOW.getTime() + 48 * HOUR) });
    expect((await check(hops, { world: tested })).failure?.hop).toBe(3);
    expect(tested.proofsChecked).toEqual(['agent-0', 'agent-1', 'agent-2', 'agent-3']);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const UNIVERSE = ['search', 'read', 'write', 'delete', 'deploy', 'list', 'mail', 'pay'];

/** A random valid chain: each set a subset of the one before (anything below *), all with search. */
const validChains = fc
  .record({
    depth: fc.integer({ min: 0, max: 6 }),
    rootAll: fc.boolean(),
    linkAll: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    masks: fc.array(fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), {
      minLength: 7,
      maxLength: 7,
    }),
  })
  .map(({ depth, rootAll, linkAll, masks }) => {
    const sets: string[][] = [];
    for (let index = 0; index <= depth; index++) {
      const previous = sets[index - 1];
      const all = index === 0 ? rootAll : previous?.[0] === '*' && linkAll[index - 1] === true;
      if (all) {
        sets.push(['*']);
        continue;
      }
      const from = previous === undefined || previous[0] === '*' ? UNIVERSE : previous;
      const mask = masks[index] as boolean[];
      sets.push(from.filter((tool, at) => tool === 'search' || mask[at % 8] === true));
    }
    return sets.map((tools, index): HopSpec => ({ agent: index, tools }));
  });

type Injected =
  | 'expired'
  | 'notYetValid'
  | 'tenant'
  | 'signature'
  | 'killed'
  | 'toolMissing'
  | 'brokenLink'
  | 'widened'
  | 'notNested'
  | 'revoked';

const CODE_OF: Record<Injected, (hop: number) => string> = {
  expired: () => 'CREDENTIAL_EXPIRED',
  notYetValid: () => 'CREDENTIAL_NOT_YET_VALID',
  tenant: () => 'CREDENTIAL_TENANT_MISMATCH',
  signature: (hop) => (hop === 0 ? 'CREDENTIAL_SIGNATURE_INVALID' : 'DELEGATION_SIGNATURE_INVALID'),
  killed: () => 'CREDENTIAL_REVOKED',
  toolMissing: () => 'DELEGATION_TOOL_NOT_PERMITTED',
  brokenLink: () => 'DELEGATION_BROKEN_LINK',
  widened: () => 'DELEGATION_TOOLS_WIDENED',
  notNested: () => 'DELEGATION_EXPIRY_NOT_NESTED',
  revoked: () => 'CREDENTIAL_REVOKED',
};

describe('properties', () => {
  it('any chain within the depth limit whose sets only shrink verifies', async () => {
    await fc.assert(
      fc.asyncProperty(validChains, async (hops) => {
        const result = await check(hops);
        expect(result.failure).toBeNull();
        expect(result.depth).toBe(hops.length - 1);
        expect(result.permittedTools).toEqual(hops[hops.length - 1]?.tools);
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('widening the tool set at any hop fails at that hop', async () => {
    await fc.assert(
      fc.asyncProperty(validChains, fc.nat(), fc.boolean(), async (hops, pick, star) => {
        const widenable = hops.flatMap((_, index) =>
          index > 0 && hops[index - 1]?.tools[0] !== '*' ? [index] : [],
        );
        fc.pre(widenable.length > 0);
        const hop = widenable[pick % widenable.length] as number;
        const tools = star ? ['*'] : [...(hops[hop]?.tools ?? []), 'not-delegated'];
        const result = await check(withHop(hops, hop, { tools }));
        expect(result.failure).toMatchObject({ hop, code: 'DELEGATION_TOOLS_WIDENED' });
      }),
      { numRuns: propertyRuns(60) },
    );
  });

  it('with failures injected at several hops, the earliest is named with its code', async () => {
    const injections = fc.uniqueArray(
      fc.record({
        hop: fc.integer({ min: 0, max: 6 }),
        kind: fc.constantFrom<Injected>(
          'expired',
          'notYetValid',
          'tenant',
          'signature',
          'killed',
          'toolMissing',
          'brokenLink',
          'widened',
          'notNested',
          'revoked',
        ),
      }),
      { minLength: 1, maxLength: 4, selector: (injection) => injection.hop },
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 6 }), injections, async (depth, all) => {
        const chosen = all.filter(
          ({ hop, kind }) =>
            hop <= depth &&
            (hop > 0 || !['brokenLink', 'widened', 'notNested'].includes(kind)) &&
            (hop === 0 || kind !== 'revoked'),
        );
        fc.pre(chosen.length > 0);
        let hops = validHops(depth);
        const killed: string[] = [];
        for (const { hop, kind } of chosen) {
          hops = withHop(hops, hop, injectedChange(kind, hop, hops, killed));
        }
        const result = await check(hops, { world: world({ killed, revoked: [9999] }) });
        const first = chosen.reduce((a, b) => (b.hop < a.hop ? b : a));
        expect(result.failure).toMatchObject({
          hop: first.hop,
          code: CODE_OF[first.kind](first.hop),
        });
      }),
      { numRuns: propertyRuns(150) },
    );
  });
});

function injectedChange(
  kind: Injected,
  hop: number,
  hops: readonly HopSpec[],
  killed: string[],
): Partial<HopSpec> {
  switch (kind) {
    case 'expired':
      return { expiresAt: new Date(NOW.getTime() - 1000) };
    case 'notYetValid':
      return { issuedAt: new Date(NOW.getTime() + 61_000) };
    case 'tenant':
      return { tenantId: OTHER_TENANT };
    case 'signature':
      return {
        tamper: (vc) => {
          vc.id = `urn:uuid:${randomUUID()}`;
        },
      };
    case 'killed':
      killed.push(agent(hop).id);
      return {};
    case 'toolMissing':
      return { tools: (hops[hop]?.tools ?? []).filter((tool) => tool !== 'search') };
    case 'brokenLink':
      return { delegatorAgentId: 'agent-nobody' };
    case 'widened':
      return { tools: [...(hops[hop]?.tools ?? []), 'not-delegated'] };
    case 'notNested':
      return { expiresAt: new Date(NOW.getTime() + 48 * HOUR) };
    case 'revoked':
      return { status: 9999 };
  }
}
