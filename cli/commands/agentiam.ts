// The `agentiam` command group: what an agent (or its operator) does with its own Ed25519 key,
// client side — the gateway never sees an agent's private key.
//   keygen    makes a key pair: a private JWK file (mode 0600) and the `z6Mk…` public key to
//             register with createAgent;
//   delegate  signs an AgentDelegationCredential from the credential the delegator holds (its
//             identity credential or the link it received) to another agent's key;
//   proof     makes the Agent-Proof header of one inspect call.
// Exit codes: 0 done, 1 refused (the delegation would not verify), 2 usage or I/O error.
// The credential and proof modules (the W3C VC libraries, jose) are loaded by the command that
// signs with them: every other command of the program, and --help, would pay about 0.5 s of CPU.
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { writeSecretFile } from '../../runtime/secret-file.js';
import { agentDid } from '../../shared/agentiam/dids.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
  keyMaterialFromSeed,
} from '../../shared/agentiam/ed25519-keys.js';
import {
  decodeEd25519PublicKey,
  isEd25519PublicKey,
} from '../../shared/identity/ed25519-multibase.js';

const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;
const MIN_TTL_SECONDS = 60;
const MAX_TTL_SECONDS = 30 * 24 * 3600;

/** A problem the operator must fix; printed as `agentiam: CODE message (hint: …)`. */
class CommandProblem extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
  }
}

export function registerAgentiamCommand(program: Command): void {
  const group = program
    .command('agentiam')
    .description("Agent identity, client side: an agent's key, delegations and call proofs.")
    .addHelpText('after', '\nFormats, verify codes and examples: docs/agentiam.md.');
  // Usage errors (a bad --ttl, a malformed --to) exit 2 like every other unusable input.
  const exitOnUsage = (error: { code: string; exitCode: number }) => {
    process.exit(error.code.startsWith('commander.help') ? error.exitCode : EXIT_USAGE);
  };
  group
    .command('keygen')
    .description('Make an Ed25519 key pair for an agent: a private JWK file and its z6Mk… key.')
    .requiredOption('--out <file>', 'where to write the private key (JWK, created mode 0600)')
    .option('--force', 'replace the file --out names if it exists (its key is lost)')
    .addHelpText(
      'after',
      '\nPrints the public key (z6Mk…) to register as the agent publicKey (createAgent).\n' +
        'An existing --out file is never replaced without --force: an agent registered with the\n' +
        'key in it could no longer prove its identity.\n' +
        'Exit codes: 0 written, 2 usage or I/O error (KEY_FILE_EXISTS: --out exists, nothing written).',
    )
    .exitOverride(exitOnUsage)
    .action(async (flags: { out: string; force?: boolean }) => {
      await run(async () => {
        const key = generateEd25519KeyMaterial();
        const jwk = `${JSON.stringify(toPrivateJwk(key))}\n`;
        try {
          await writeSecretFile(flags.out, jwk, { overwrite: flags.force === true });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          throw new CommandProblem(
            'KEY_FILE_EXISTS',
            `${flags.out} already exists; it was left as it was`,
            'Choose another --out, or pass --force to replace it (the key in it is then lost, and an agent registered with it must be given the new one).',
          );
        }
        process.stdout.write(`${key.publicKeyMultibase}\n`);
      });
    });
  group
    .command('delegate')
    .description(
      'Sign an AgentDelegationCredential handing a subset of your tools to another agent.',
    )
    .requiredOption('--key-file <file>', "the delegator's private key (JWK, from keygen)")
    .requiredOption(
      '--from <file>',
      'the credential you delegate from: your identity credential or the link you received',
    )
    .requiredOption('--to <publicKey>', "the delegate's public key (z6Mk…)", parsePublicKey)
    .requiredOption('--to-agent <agentId>', "the delegate's agent id")
    .requiredOption(
      '--tools <names>',
      'comma-separated tools to delegate (a subset of yours)',
      parseTools,
    )
    .option('--ttl <seconds>', 'lifetime in seconds (60 to 2592000)', parseTtl, 3600)
    .addHelpText(
      'after',
      '\nWrites the signed credential (JSON) to stdout. Exit codes: 0 signed, 1 refused because the\n' +
        'chain would not verify (tools not yours, expiry past the credential you hold), 2 usage or I/O.',
    )
    .exitOverride(exitOnUsage)
    .action(
      async (flags: {
        keyFile: string;
        from: string;
        to: string;
        toAgent: string;
        tools: string[];
        ttl: number;
      }) => {
        await run(async () => {
          const key = await readKeyFile(flags.keyFile);
          const parent = await readParentCredential(flags.from);
          const delegator = agentDid(key.publicKeyMultibase);
          if (parent.subjectId !== delegator) {
            throw new CommandProblem(
              'DELEGATION_BROKEN_LINK',
              `${flags.from} is held by ${parent.subjectId}, not by the key in ${flags.keyFile} (${delegator})`,
              'Delegate from a credential whose credentialSubject.id is your own did:key.',
              EXIT_REFUSED,
            );
          }
          const widened = flags.tools.filter(
            (tool) => !parent.permittedTools.includes('*') && !parent.permittedTools.includes(tool),
          );
          if (widened.length > 0) {
            throw new CommandProblem(
              'DELEGATION_TOOLS_WIDENED',
              `you do not hold ${widened.join(', ')} (yours: ${parent.permittedTools.join(', ')})`,
              'Delegate only tools listed in permittedTools of the credential given with --from.',
              EXIT_REFUSED,
            );
          }
          const issuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
          const expiresAt = new Date(issuedAt.getTime() + flags.ttl * 1000);
          if (expiresAt > parent.expiresAt) {
            throw new CommandProblem(
              'DELEGATION_EXPIRY_NOT_NESTED',
              `--ttl ${flags.ttl} ends at ${expiresAt.toISOString()}, after ${flags.from} expires (${parent.expiresAt.toISOString()})`,
              'Use a shorter --ttl: a delegation must not outlive the credential it comes from.',
              EXIT_REFUSED,
            );
          }
          const [{ delegationCredentialDocument, signCredential }, { createDocumentLoader }] =
            await Promise.all([
              import('../../shared/agentiam/credentials.js'),
              import('../../shared/agentiam/document-loader.js'),
            ]);
          const document = delegationCredentialDocument({
            id: `urn:uuid:${crypto.randomUUID()}`,
            tenantId: parent.tenantId,
            delegatorPublicKey: key.publicKeyMultibase,
            delegatorAgentId: parent.agentId,
            delegatePublicKey: flags.to,
            delegateAgentId: flags.toAgent,
            permittedTools: flags.tools,
            issuedAt,
            expiresAt,
          });
          const signed = await signCredential(
            document,
            { verificationMethod: `${delegator}#${key.publicKeyMultibase}`, key },
            createDocumentLoader(() => null),
          );
          process.stdout.write(`${JSON.stringify(signed, null, 2)}\n`);
        });
      },
    );
  group
    .command('proof')
    .description('Make the Agent-Proof header value of one inspect call (valid 60 s, usable once).')
    .requiredOption('--key-file <file>', "the agent's private key (JWK, from keygen)")
    .requiredOption(
      '--url <url>',
      'the exact URL called, e.g. https://gw.example/api/v1/mcp/gateway/inspect',
    )
    .requiredOption('--body-file <file>', "the exact request body bytes; '-' reads standard input")
    .option('--method <method>', 'the HTTP method', 'POST')
    .exitOverride(exitOnUsage)
    .action(async (flags: { keyFile: string; url: string; bodyFile: string; method: string }) => {
      await run(async () => {
        const key = await readKeyFile(flags.keyFile);
        const body =
          flags.bodyFile === '-' ? await readStdin() : await readInput(flags.bodyFile, 'body');
        const { createAgentProof } = await import('../../shared/agentiam/proof-of-possession.js');
        const jws = await createAgentProof({ key, htm: flags.method, htu: flags.url, body });
        process.stdout.write(`${jws}\n`);
      });
    });
}

async function run(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (error instanceof CommandProblem) {
      process.stderr.write(`agentiam: ${error.code} ${error.message} (hint: ${error.hint})\n`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
}

function parsePublicKey(value: string): string {
  if (!isEd25519PublicKey(value)) {
    throw new InvalidArgumentError('expected an Ed25519 public key in the z6Mk… form.');
  }
  return value;
}

function parseTools(value: string): string[] {
  const tools = value
    .split(',')
    .map((tool) => tool.trim())
    .filter((tool) => tool.length > 0);
  if (tools.length === 0) throw new InvalidArgumentError('name at least one tool.');
  return [...new Set(tools)];
}

function parseTtl(value: string): number {
  const ttl = Number(value);
  if (!/^\d+$/.test(value) || ttl < MIN_TTL_SECONDS || ttl > MAX_TTL_SECONDS) {
    throw new InvalidArgumentError(
      `expected whole seconds from ${MIN_TTL_SECONDS} to ${MAX_TTL_SECONDS}.`,
    );
  }
  return ttl;
}

/** The JWK `x` of a key pair's public half. */
function publicX(key: Ed25519KeyMaterial): string {
  // Key material always carries a well-formed z6Mk… key, so it always decodes.
  return Buffer.from(decodeEd25519PublicKey(key.publicKeyMultibase) ?? []).toString('base64url');
}

function toPrivateJwk(key: Ed25519KeyMaterial): Record<string, string> {
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: publicX(key),
    d: Buffer.from(key.secretKey).toString('base64url'),
  };
}

async function readKeyFile(file: string): Promise<Ed25519KeyMaterial> {
  const text = await readInput(file, 'key');
  let jwk: unknown;
  try {
    jwk = JSON.parse(text.toString('utf8'));
  } catch {
    throw keyFileProblem(file, 'it is not JSON');
  }
  const { kty, crv, d, x } = (jwk ?? {}) as Record<string, unknown>;
  if (kty !== 'OKP' || crv !== 'Ed25519' || typeof d !== 'string' || typeof x !== 'string') {
    throw keyFileProblem(file, 'expected a private Ed25519 JWK (kty OKP, crv Ed25519, d, x)');
  }
  const seed = Buffer.from(d, 'base64url');
  if (seed.length !== 32) throw keyFileProblem(file, 'd is not 32 bytes');
  const key = keyMaterialFromSeed(seed);
  if (publicX(key) !== x) {
    throw keyFileProblem(file, 'x is not the public key of d');
  }
  return key;
}

function keyFileProblem(file: string, problem: string): CommandProblem {
  return new CommandProblem(
    'KEY_FILE_INVALID',
    `${file}: ${problem}`,
    'Use a file written by `agent-gateway agentiam keygen --out <file>`.',
  );
}

interface ParentCredential {
  readonly tenantId: string;
  readonly agentId: string;
  readonly subjectId: string;
  readonly permittedTools: readonly string[];
  readonly expiresAt: Date;
}

async function readParentCredential(file: string): Promise<ParentCredential> {
  const text = await readInput(file, 'credential');
  let credential: Record<string, unknown>;
  try {
    credential = JSON.parse(text.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw parentProblem(file, 'it is not JSON');
  }
  const subject = (credential?.credentialSubject ?? {}) as Record<string, unknown>;
  const expiresAt = new Date(String(credential?.expirationDate));
  const tools = subject.permittedTools;
  if (
    typeof subject.id !== 'string' ||
    typeof subject.tenantId !== 'string' ||
    typeof subject.agentId !== 'string' ||
    !Array.isArray(tools) ||
    !tools.every((tool) => typeof tool === 'string') ||
    Number.isNaN(expiresAt.getTime())
  ) {
    throw parentProblem(
      file,
      'expected a credential with expirationDate and credentialSubject {id, tenantId, agentId, permittedTools}',
    );
  }
  return {
    tenantId: subject.tenantId,
    agentId: subject.agentId,
    subjectId: subject.id,
    permittedTools: tools as string[],
    expiresAt,
  };
}

function parentProblem(file: string, problem: string): CommandProblem {
  return new CommandProblem(
    'CREDENTIAL_MALFORMED',
    `${file}: ${problem}`,
    'Pass the identity credential you were issued (issueAgentCredential) or a delegation you received.',
  );
}

async function readInput(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new CommandProblem(
      'FILE_UNREADABLE',
      `cannot read the ${what} file ${file}: ${(error as Error).message}`,
      'Check the path and its permissions.',
    );
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
