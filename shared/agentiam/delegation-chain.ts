// The delegation-chain rules (spec §4.7, DESIGN.md §6): a root AgentIdentityCredential issued by
// the caller's tenant CA, then AgentDelegationCredentials, each made by the previous hop's subject
// for a delegate with at most the tools it holds, expiring no later. Hop 0 is the root, hop i is
// chain[i-1]; depth is the number of links. The answer names the first failing hop and its rule.
//
// Rules, in the order they are judged (the first that fails is the answer):
//   0. Depth: more than maxDepth links fails at hop maxDepth+1 (DELEGATION_DEPTH_EXCEEDED) before
//      any credential is read, so an overlong chain costs nothing. The one rule judged for the
//      whole chain first; all others are judged hop by hop, from the root out, in this order:
//   1. shape (CREDENTIAL_MALFORMED): root an AgentIdentityCredential, links
//      AgentDelegationCredentials, with the fields the rules read;
//   2. root only: issuer is the caller's tenant CA (CREDENTIAL_ISSUER_UNTRUSTED);
//   3. credentialSubject.tenantId is the caller's tenant (CREDENTIAL_TENANT_MISMATCH);
//   4. credentialSubject.id is the did:key of the registered agent it names
//      (CREDENTIAL_SUBJECT_UNKNOWN); 5. that agent is not killed (CREDENTIAL_REVOKED);
//   6. links only: issuer is the previous subject's did:key and delegatorAgentId its agent id
//      (DELEGATION_BROKEN_LINK);
//   7. the proof verifies (CREDENTIAL_SIGNATURE_INVALID at the root, DELEGATION_SIGNATURE_INVALID
//      on a link);
//   8. now is within [issuanceDate − 60 s, expirationDate] (CREDENTIAL_NOT_YET_VALID,
//      CREDENTIAL_EXPIRED); the 60 s allow for a control plane whose clock is ahead of this one;
//   9. not revoked in its status list, when it has a credentialStatus; an unknown list counts as
//      revoked, fail closed (CREDENTIAL_REVOKED);
//  10. links only: the tool set only shrinks (DELEGATION_TOOLS_WIDENED); `*` means every tool, so
//      below a `*` set a link may list anything, but no link may bring `*` below a finite set;
//  11. links only: expirationDate no later than the previous hop's (DELEGATION_EXPIRY_NOT_NESTED);
//  12. no agent appears twice (DELEGATION_CYCLE);
//  13. the requested tool is in the hop's set, `*` matching every tool
//      (DELEGATION_TOOL_NOT_PERMITTED).
//
// Proofs are the one expensive rule, so the synchronous rules of every hop run first and
// signatures are verified afterwards, in hop order, only for the hops the answer depends on: the
// hops before the first synchronous failure, and that hop itself when its failing rule comes
// after the proof. The answer is exactly that of judging the rules one by one in the order above.
// A verifyProof that throws (rather than answering verified: false) is an unexpected error and
// propagates: it never counts as verified.
import { z } from 'zod';
import { AGENT_RULES } from '../agents/agent-rules.js';
import { type ErrorCode, type ErrorParams, formatErrorMessage } from '../errors/index.js';
import { agentDid } from './dids.js';

export interface CredentialStatusRef {
  readonly statusListCredential: string;
  readonly statusListIndex: number;
}

export type ProofCheck = { verified: true } | { verified: false; reason: string };

export interface VerifyDelegationChainInput {
  /** The caller's tenant (its API key's). */
  readonly tenantId: string;
  readonly rootCredential: unknown;
  readonly chain: readonly unknown[];
  readonly requestedTool: string;
  /** The tenant's maxDelegationDepth: links allowed after the root. */
  readonly maxDepth: number;
  readonly now: Date;
}

export interface DelegationChainDependencies {
  /** The credential's proof (signature, purpose, controller); not dates or status. */
  verifyProof(vc: Record<string, unknown>): Promise<ProofCheck>;
  /** True when `did` is the caller tenant's CA (did:svc:<tenantId>). */
  trustedIssuer(did: string): boolean;
  /** The entry's bit; null when the list is unknown (treated as revoked). */
  isRevoked(credentialStatus: CredentialStatusRef): boolean | null;
  /** The registered agent of the caller's tenant; null when there is none. */
  agent(agentId: string): { publicKey: string; status: 'active' | 'killed' } | null;
}

export interface ChainFailure {
  readonly hop: number;
  readonly code: ErrorCode;
  readonly message: string;
}

export interface ChainResult {
  readonly valid: boolean;
  /** Links after the root (as presented, also when invalid). */
  readonly depth: number;
  /** The last hop's agent; null when invalid. */
  readonly agentId: string | null;
  /** The last hop's tool set; empty when invalid. */
  readonly permittedTools: string[];
  /** Agent ids from the root to the last hop; empty when invalid. */
  readonly chain: string[];
  readonly failure: ChainFailure | null;
}

const ALL_TOOLS = '*';
/** A credential issued by a process whose clock runs this far ahead is still accepted. */
const ISSUANCE_CLOCK_SKEW_MS = 60_000;

const DATE_TIME = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

/** VCDM lets an issuer be a URI or an object with an id; the rules need the id. */
const ISSUER = z
  .union([z.string().min(1), z.looseObject({ id: z.string().min(1) })], {
    message: 'must be a DID or an object with an id',
  })
  .transform((issuer) => (typeof issuer === 'string' ? issuer : issuer.id));

function typesIncluding(kind: string) {
  return z
    .array(z.string())
    .refine(
      (types) => types.includes('VerifiableCredential') && types.includes(kind),
      `must list VerifiableCredential and ${kind}`,
    );
}

const CREDENTIAL_STATUS = z.looseObject({
  type: z.literal('BitstringStatusListEntry'),
  statusPurpose: z.literal('revocation'),
  statusListIndex: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, 'must be a base-10 integer string')
    .transform(Number),
  statusListCredential: z.string().min(1),
});

const COMMON = {
  id: z.string().min(1),
  issuer: ISSUER,
  issuanceDate: DATE_TIME,
  expirationDate: DATE_TIME,
  credentialStatus: CREDENTIAL_STATUS.optional(),
  proof: z.looseObject({}),
};

const SUBJECT = {
  id: z.string().min(1),
  tenantId: z.string(),
  agentId: z.string().min(1),
  permittedTools: AGENT_RULES.allowedTools,
};

const IDENTITY_CREDENTIAL = z.looseObject({
  ...COMMON,
  type: typesIncluding('AgentIdentityCredential'),
  credentialSubject: z.looseObject(SUBJECT),
});

const DELEGATION_CREDENTIAL = z.looseObject({
  ...COMMON,
  type: typesIncluding('AgentDelegationCredential'),
  credentialSubject: z.looseObject({ ...SUBJECT, delegatorAgentId: z.string().min(1) }),
});

type Credential = z.infer<typeof IDENTITY_CREDENTIAL> & {
  credentialSubject: { delegatorAgentId?: string };
};

/** What later hops and the answer need of a hop that passed its synchronous rules. */
interface CheckedHop {
  readonly index: number;
  readonly vc: Record<string, unknown>;
  readonly subjectId: string;
  readonly agentId: string;
  readonly tools: readonly string[];
  readonly allTools: boolean;
  readonly expiresAt: number;
}

type HopOutcome =
  | { readonly hop: CheckedHop; readonly failure: null }
  /** A rule before the proof failed: the proof does not matter. */
  | { readonly hop: null; readonly failure: ChainFailure }
  /** A rule after the proof failed: a bad proof of this hop would be the answer. */
  | { readonly hop: CheckedHop; readonly failure: ChainFailure };

/** Judges a delegation chain by the rules above; never throws for a bad chain. */
export async function verifyDelegationChain(
  input: VerifyDelegationChainInput,
  deps: DelegationChainDependencies,
): Promise<ChainResult> {
  const depth = input.chain.length;
  if (depth > input.maxDepth) {
    const hop = Math.max(0, input.maxDepth + 1);
    return invalid(depth, fail(hop, 'DELEGATION_DEPTH_EXCEEDED', { depth, limit: input.maxDepth }));
  }

  const checked: CheckedHop[] = [];
  const agentIds = new Set<string>();
  let firstFailure: ChainFailure | null = null;
  for (let index = 0; index <= depth; index++) {
    const raw = index === 0 ? input.rootCredential : input.chain[index - 1];
    const outcome = checkHop(index, raw, checked[index - 1], agentIds, input, deps);
    if (outcome.hop !== null) checked.push(outcome.hop);
    if (outcome.failure !== null) {
      firstFailure = outcome.failure;
      break;
    }
    agentIds.add(outcome.hop.agentId);
  }

  for (const hop of checked) {
    const proof = await deps.verifyProof(hop.vc);
    if (!proof.verified) {
      return invalid(
        depth,
        hop.index === 0
          ? fail(0, 'CREDENTIAL_SIGNATURE_INVALID', { reason: proof.reason })
          : fail(hop.index, 'DELEGATION_SIGNATURE_INVALID', { reason: proof.reason }),
      );
    }
  }
  if (firstFailure !== null) return invalid(depth, firstFailure);

  const leaf = checked[checked.length - 1] as CheckedHop;
  return {
    valid: true,
    depth,
    agentId: leaf.agentId,
    permittedTools: [...leaf.tools],
    chain: checked.map((hop) => hop.agentId),
    failure: null,
  };
}

/** Rules 1-6 and 8-13 of one hop (see the module header). */
function checkHop(
  index: number,
  raw: unknown,
  previous: CheckedHop | undefined,
  agentIds: ReadonlySet<string>,
  input: VerifyDelegationChainInput,
  deps: DelegationChainDependencies,
): HopOutcome {
  const before = (failure: ChainFailure): HopOutcome => ({ hop: null, failure });
  const parsed = (previous === undefined ? IDENTITY_CREDENTIAL : DELEGATION_CREDENTIAL).safeParse(
    raw,
  );
  if (!parsed.success) {
    return before(fail(index, 'CREDENTIAL_MALFORMED', { problem: describeIssues(parsed.error) }));
  }
  const credential: Credential = parsed.data;
  const subject = credential.credentialSubject;

  if (previous === undefined && !deps.trustedIssuer(credential.issuer)) {
    return before(fail(index, 'CREDENTIAL_ISSUER_UNTRUSTED', { issuer: credential.issuer }));
  }
  if (subject.tenantId !== input.tenantId) {
    return before(fail(index, 'CREDENTIAL_TENANT_MISMATCH', { tenantId: subject.tenantId }));
  }
  const agent = deps.agent(subject.agentId);
  if (agent === null || agentDid(agent.publicKey) !== subject.id) {
    return before(
      fail(index, 'CREDENTIAL_SUBJECT_UNKNOWN', { subject: subject.id, agentId: subject.agentId }),
    );
  }
  if (agent.status === 'killed') {
    return before(fail(index, 'CREDENTIAL_REVOKED', { credentialId: credential.id }));
  }
  if (previous !== undefined) {
    if (credential.issuer !== previous.subjectId) {
      return before(
        fail(index, 'DELEGATION_BROKEN_LINK', {
          issuer: credential.issuer,
          expected: previous.subjectId,
        }),
      );
    }
    if (subject.delegatorAgentId !== previous.agentId) {
      return before(
        fail(index, 'DELEGATION_BROKEN_LINK', {
          issuer: `agent ${subject.delegatorAgentId}`,
          expected: `agent ${previous.agentId}`,
        }),
      );
    }
  }

  const hop: CheckedHop = {
    index,
    vc: raw as Record<string, unknown>,
    subjectId: subject.id,
    agentId: subject.agentId,
    tools: subject.permittedTools,
    allTools: subject.permittedTools.includes(ALL_TOOLS),
    expiresAt: Date.parse(credential.expirationDate),
  };
  const after = (failure: ChainFailure): HopOutcome => ({ hop, failure });
  const now = input.now.getTime();

  if (now + ISSUANCE_CLOCK_SKEW_MS < Date.parse(credential.issuanceDate)) {
    return after(fail(index, 'CREDENTIAL_NOT_YET_VALID', { validFrom: credential.issuanceDate }));
  }
  if (now > hop.expiresAt) {
    return after(fail(index, 'CREDENTIAL_EXPIRED', { expiredAt: credential.expirationDate }));
  }
  if (credential.credentialStatus !== undefined) {
    const { statusListCredential, statusListIndex } = credential.credentialStatus;
    if (deps.isRevoked({ statusListCredential, statusListIndex }) !== false) {
      return after(fail(index, 'CREDENTIAL_REVOKED', { credentialId: credential.id }));
    }
  }
  if (previous !== undefined) {
    const widened = widenedTools(previous, hop);
    if (widened !== null) return after(fail(index, 'DELEGATION_TOOLS_WIDENED', { tools: widened }));
    if (hop.expiresAt > previous.expiresAt) {
      return after(
        fail(index, 'DELEGATION_EXPIRY_NOT_NESTED', {
          expiresAt: credential.expirationDate,
          limit: new Date(previous.expiresAt).toISOString(),
        }),
      );
    }
  }
  if (agentIds.has(hop.agentId)) {
    return after(fail(index, 'DELEGATION_CYCLE', { agentId: hop.agentId }));
  }
  if (!hop.allTools && !hop.tools.includes(input.requestedTool)) {
    return after(fail(index, 'DELEGATION_TOOL_NOT_PERMITTED', { tool: input.requestedTool }));
  }
  return { hop, failure: null };
}

/** The tools `hop` lists that `previous` does not hold, as message text; null when none. */
function widenedTools(previous: CheckedHop, hop: CheckedHop): string | null {
  if (previous.allTools) return null;
  if (hop.allTools) return ALL_TOOLS;
  const held = new Set(previous.tools);
  const extra = hop.tools.filter((tool) => !held.has(tool));
  if (extra.length === 0) return null;
  const shown = extra.slice(0, 5).join(', ');
  return extra.length > 5 ? `${shown} and ${extra.length - 5} more` : shown;
}

/** Zod's issues as one line: `path: message`, at most three. */
function describeIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path
      .map((key, at) => (typeof key === 'number' ? `[${key}]` : at === 0 ? key : `.${String(key)}`))
      .join('');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return issues.join('; ') + more;
}

function fail<Code extends ErrorCode>(
  hop: number,
  code: Code,
  params: Omit<ErrorParams<Code>, 'hop'>,
): ChainFailure {
  return { hop, code, message: formatErrorMessage(code, { hop, ...params } as ErrorParams<Code>) };
}

function invalid(depth: number, failure: ChainFailure): ChainResult {
  return { valid: false, depth, agentId: null, permittedTools: [], chain: [], failure };
}
