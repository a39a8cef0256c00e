// `agent-gateway agentiam` run as an operator runs it: keygen writes a private JWK only its owner
// can read; delegate signs a link that Digital Bazaar's verifier accepts and that our chain rules
// accept after the root credential; refusals name the rule and exit 1; proof makes an Agent-Proof
// our verifier accepts for exactly that body and URL.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ed25519Signature2020 } from '@digitalbazaar/ed25519-signature-2020';
import { verifyCredential } from '@digitalbazaar/vc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityCredentialDocument, signCredential } from '../../shared/agentiam/credentials.js';
import { verifyDelegationChain } from '../../shared/agentiam/delegation-chain.js';
import {
  agentDid,
  tenantDid,
  tenantDidDocument,
  tenantVerificationMethodId,
} from '../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../shared/agentiam/document-loader.js';
import { generateEd25519KeyMaterial } from '../../shared/agentiam/ed25519-keys.js';
import { verifyAgentProof } from '../../shared/agentiam/proof-of-possession.js';
import { verifyCredentialProof } from '../../shared/agentiam/verify-proof.js';
import { runCliToEnd } from '../support/cli-process.js';

const TENANT = randomUUID();
const ca = generateEd25519KeyMaterial();
const caDocument = tenantDidDocument(TENANT, [
  {
    id: 'kid-1',
    publicKeyMultibase: ca.publicKeyMultibase,
    status: 'active',
    resolvableUntil: null,
  },
]);
const loader = createDocumentLoader((did) => (did === tenantDid(TENANT) ? caDocument : null));

let dir: string;
let keyFile: string;
let rootFile: string;
let agentKey: string;
let root: Record<string, unknown>;
const delegate = generateEd25519KeyMaterial();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agw-agentiam-'));
  keyFile = join(dir, 'agent.jwk');
  const keygen = await runCliToEnd(['agentiam', 'keygen', '--out', keyFile]);
  expect(keygen.code).toBe(0);
  agentKey = keygen.stdout[0] as string;
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  root = await signCredential(
    identityCredentialDocument({
      id: randomUUID(),
      tenantId: TENANT,
      agentId: 'agent-a',
      agentPublicKey: agentKey,
      permittedTools: ['read_file', 'search'],
      supervisingUserId: 'ops@example.com',
      issuedAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      statusListUrl: 'https://gateway.example/api/v1/agentiam/status-lists/l1',
      statusListIndex: 7,
    }),
    { verificationMethod: tenantVerificationMethodId(TENANT), key: ca },
    loader,
  );
  rootFile = join(dir, 'root.json');
  await writeFile(rootFile, JSON.stringify(root));
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const delegateArgs = (extra: string[] = []) => [
  'agentiam',
  'delegate',
  '--key-file',
  keyFile,
  '--from',
  rootFile,
  '--to',
  delegate.publicKeyMultibase,
  '--to-agent',
  'agent-b',
  '--tools',
  'search',
  ...extra,
];

describe('agent-gateway agentiam', () => {
  it('keygen writes a private Ed25519 JWK readable only by its owner and prints its z6Mk key', async () => {
    expect(agentKey).toMatch(/^z6Mk[1-9A-HJ-NP-Za-km-z]{44}$/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const jwk = JSON.parse(await readFile(keyFile, 'utf8'));
    expect(Object.keys(jwk).sort()).toEqual(['crv', 'd', 'kty', 'x']);
    expect([jwk.kty, jwk.crv]).toEqual(['OKP', 'Ed25519']);
  });

  it('keygen never replaces an existing key file without --force', async () => {
    const before = await readFile(keyFile, 'utf8');
    const refused = await runCliToEnd(['agentiam', 'keygen', '--out', keyFile]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toEqual([]);
    expect(refused.stderr.join('\n')).toBe(
      `agentiam: KEY_FILE_EXISTS ${keyFile} already exists; it was left as it was (hint: Choose another --out, or pass --force to replace it (the key in it is then lost, and an agent registered with it must be given the new one).)`,
    );
    expect(await readFile(keyFile, 'utf8')).toBe(before);

    const replaced = join(dir, 'replaced.jwk');
    await writeFile(replaced, 'old\n');
    const forced = await runCliToEnd(['agentiam', 'keygen', '--out', replaced, '--force']);
    expect(forced.code).toBe(0);
    const jwk = JSON.parse(await readFile(replaced, 'utf8'));
    expect(forced.stdout[0]).toMatch(/^z6Mk/);
    expect(jwk.kty).toBe('OKP');
    expect((await stat(replaced)).mode & 0o777).toBe(0o600);

    const help = await runCliToEnd(['agentiam', 'keygen', '--help']);
    expect(help.stdout.join('\n')).toMatch(/--force +replace the file --out names if it exists/);
    expect(help.stdout.join('\n')).toContain('KEY_FILE_EXISTS');
  }, 60_000);

  it('delegate signs a link a standard verifier accepts and our chain rules accept', async () => {
    const result = await runCliToEnd(delegateArgs(['--ttl', '600']));
    expect(result.code).toBe(0);
    const link = JSON.parse(result.stdout.join('\n')) as Record<string, unknown>;
    expect(link.issuer).toBe(agentDid(agentKey));
    expect(link.credentialSubject).toMatchObject({
      id: agentDid(delegate.publicKeyMultibase),
      tenantId: TENANT,
      agentId: 'agent-b',
      delegatorAgentId: 'agent-a',
      permittedTools: ['search'],
    });
    const standard = await verifyCredential({
      credential: link,
      suite: new Ed25519Signature2020(),
      documentLoader: loader,
    });
    expect(standard.verified).toBe(true);
    const chain = await verifyDelegationChain(
      {
        tenantId: TENANT,
        rootCredential: root,
        chain: [link],
        requestedTool: 'search',
        maxDepth: 3,
        now: new Date(),
      },
      {
        verifyProof: (vc) => verifyCredentialProof(vc, loader),
        trustedIssuer: (did) => did === tenantDid(TENANT),
        isRevoked: () => false,
        agent: (id) =>
          id === 'agent-a'
            ? { publicKey: agentKey, status: 'active' }
            : id === 'agent-b'
              ? { publicKey: delegate.publicKeyMultibase, status: 'active' }
              : null,
      },
    );
    expect(chain).toMatchObject({ valid: true, depth: 1, agentId: 'agent-b', failure: null });
  }, 60_000);

  it('refuses, with exit 1 and the rule code, a delegation the chain rules would reject', async () => {
    const widened = await runCliToEnd([
      ...delegateArgs().slice(0, -2),
      '--tools',
      'search,delete_everything',
    ]);
    expect(widened.code).toBe(1);
    expect(widened.stderr.join('\n')).toMatch(/DELEGATION_TOOLS_WIDENED .*delete_everything/);
    const outlives = await runCliToEnd(delegateArgs(['--ttl', '7200']));
    expect(outlives.code).toBe(1);
    expect(outlives.stderr.join('\n')).toContain('DELEGATION_EXPIRY_NOT_NESTED');
    const otherKey = join(dir, 'other.jwk');
    expect((await runCliToEnd(['agentiam', 'keygen', '--out', otherKey])).code).toBe(0);
    const notHolder = await runCliToEnd(
      delegateArgs().map((arg) => (arg === keyFile ? otherKey : arg)),
    );
    expect(notHolder.code).toBe(1);
    expect(notHolder.stderr.join('\n')).toContain('DELEGATION_BROKEN_LINK');
  }, 60_000);

  it('exits 2 with a hint for unusable input', async () => {
    const badKey = join(dir, 'bad.jwk');
    await writeFile(badKey, '{"kty":"RSA"}');
    const result = await runCliToEnd(delegateArgs().map((a) => (a === keyFile ? badKey : a)));
    expect(result.code).toBe(2);
    expect(result.stderr.join('\n')).toMatch(/KEY_FILE_INVALID .*\(hint: .*keygen/);
    const badTtl = await runCliToEnd(delegateArgs(['--ttl', '5']));
    expect(badTtl.code).toBe(2);
    const badTo = await runCliToEnd(
      delegateArgs().map((a) => (a === delegate.publicKeyMultibase ? 'notakey' : a)),
    );
    expect(badTo.code).toBe(2);
  }, 60_000);

  it('proof signs this body for this URL, and nothing else verifies', async () => {
    const bodyFile = join(dir, 'body.json');
    const body = '{"agent_id":"agent-a","tool_name":"search"}';
    await writeFile(bodyFile, body);
    const url = 'https://gateway.example/api/v1/mcp/gateway/inspect';
    const result = await runCliToEnd([
      'agentiam',
      'proof',
      '--key-file',
      keyFile,
      '--url',
      url,
      '--body-file',
      bodyFile,
    ]);
    expect(result.code).toBe(0);
    const jws = result.stdout[0] as string;
    const check = (bodyText: string, htu = url) =>
      verifyAgentProof(jws, {
        publicKeyMultibase: agentKey,
        htm: 'POST',
        htu,
        body: Buffer.from(bodyText),
        now: new Date(),
      });
    expect((await check(body)).ok).toBe(true);
    expect(await check(`${body} `)).toMatchObject({ ok: false, code: 'AGENT_PROOF_INVALID' });
    expect(await check(body, 'https://elsewhere.example/api/v1/mcp/gateway/inspect')).toMatchObject(
      { ok: false, code: 'AGENT_PROOF_INVALID' },
    );
  }, 60_000);
});
