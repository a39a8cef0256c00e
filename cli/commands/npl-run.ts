// What the `npl` commands do (npl.ts registers them): loaded when one of them runs, so the
// program's other commands and --help do not load the NPL engine (about 0.3 s of CPU per process).
import { readFile } from 'node:fs/promises';
import {
  type CompiledPolicy,
  compilePolicy,
  contentHash,
  createBundledRegistry,
  evaluatePolicy,
  formatIssuePath,
  loadPinnedPolicy,
  type NplContext,
  NplError,
  type NplIssue,
  type NplPolicy,
  parsePolicyUri,
  safeParsePolicy,
} from '../../shared/npl/index.js';

class CliInputError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

function formatIssue(file: string, code: string, issue: NplIssue): string {
  const where = issue.source ? `${file}:${issue.source.line}:${issue.source.column}` : file;
  const at = issue.path.length > 0 ? ` at ${formatIssuePath(issue.path)}` : '';
  const inCondition =
    issue.line !== undefined && issue.column !== undefined
      ? ` (condition ${issue.line}:${issue.column})`
      : '';
  const hint = issue.hint ? ` (hint: ${issue.hint})` : '';
  return `${where}: ${code}/${issue.code}${at}${inCondition}: ${issue.message}${hint}`;
}

function errorLines(file: string, error: unknown): string[] {
  if (error instanceof NplError) {
    if (error.issues.length === 0) return [`${file}: ${error.code}: ${error.message}`];
    return error.issues.map((issue) => formatIssue(file, error.code, issue));
  }
  const nodeError = error as NodeJS.ErrnoException;
  if (nodeError?.code === 'ENOENT') {
    return [`${file}: NPL_FILE_UNREADABLE: no such file (hint: check the path)`];
  }
  return [`${file}: NPL_FILE_UNREADABLE: ${(error as Error)?.message ?? String(error)}`];
}

interface LoadedPolicy {
  readonly policy: NplPolicy;
  /** The warnings, printed as lines. */
  readonly warnings: readonly string[];
}

/** Reads and validates a policy file; the warnings of an invalid file follow its errors. */
async function loadPolicyFile(file: string): Promise<LoadedPolicy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliInputError(errorLines(file, error));
  }
  const parsed = safeParsePolicy(text);
  const warnings = parsed.warnings.map((issue) => formatIssue(file, 'warning', issue));
  try {
    if (!parsed.success) throw parsed.error;
    compilePolicy(parsed.policy);
    return { policy: parsed.policy, warnings };
  } catch (error) {
    throw new CliInputError([...errorLines(file, error), ...warnings]);
  }
}

function printErrors(error: unknown): void {
  if (error instanceof CliInputError) for (const line of error.lines) console.error(line);
  else throw error;
}

export interface EvalOptions {
  policyFile?: string;
  policyUri?: string;
  tool: string;
  args?: string;
  agentRole?: string;
  json?: boolean;
}

async function loadForEval(options: EvalOptions): Promise<CompiledPolicy> {
  if (options.policyFile !== undefined) {
    return compilePolicy((await loadPolicyFile(options.policyFile)).policy);
  }
  const uri = options.policyUri;
  if (uri === undefined) {
    throw new CliInputError([
      'npl eval: NPL_USAGE: give --policy-file <file> or --policy-uri <svc://name@x.y.z>',
    ]);
  }
  try {
    parsePolicyUri(uri);
  } catch (error) {
    throw new CliInputError(errorLines(uri, error));
  }
  return loadPinnedPolicy(createBundledRegistry(), uri);
}

function parseArgs(json: string | undefined): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new CliInputError([
      `--args: NPL_INVALID_ARGS: not JSON: ${(error as Error).message} (hint: quote it, e.g. --args '{"amount": 5}')`,
    ]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliInputError(['--args: NPL_INVALID_ARGS: must be a JSON object']);
  }
  return value as Record<string, unknown>;
}

/** `npl check <file...>`: every file's verdict and warnings; exit 1 when one has a problem. */
export async function runNplCheck(files: readonly string[]): Promise<void> {
  let failed = false;
  for (const file of files) {
    try {
      const { policy, warnings } = await loadPolicyFile(file);
      console.log(
        `${file}: ok (${policy.policyName}@${policy.version}, ${policy.rules.length} rules)`,
      );
      for (const line of warnings) console.log(line);
    } catch (error) {
      failed = true;
      printErrors(error);
    }
  }
  if (failed) process.exitCode = 1;
}

/** `npl eval`: one decision; exit 1 on BLOCK, 0 on any other, 2 when the input is unusable. */
export async function runNplEval(options: EvalOptions): Promise<void> {
  try {
    const compiled = await loadForEval(options);
    const args = parseArgs(options.args);
    const ctx: NplContext = {
      tool: args === undefined ? { name: options.tool } : { name: options.tool, args },
      ...(args === undefined ? {} : { args }),
      ...(options.agentRole === undefined ? {} : { agentRole: options.agentRole }),
    };
    const decision = evaluatePolicy(compiled, ctx);
    if (options.json) console.log(JSON.stringify(decision));
    else {
      console.log(
        `${decision.action} ${decision.ruleId} (${decision.alertSeverity}) ${decision.policyUri}: ${decision.reason}`,
      );
    }
    process.exitCode = decision.action === 'BLOCK' ? 1 : 0;
  } catch (error) {
    printErrors(error);
    process.exitCode = 2;
  }
}

/** `npl hash <file>`: the content hash; exit 1 when the file is not a valid policy. */
export async function runNplHash(file: string): Promise<void> {
  try {
    const { policy } = await loadPolicyFile(file);
    console.log(`${contentHash(policy)}  ${file}`);
  } catch (error) {
    printErrors(error);
    process.exitCode = 1;
  }
}
