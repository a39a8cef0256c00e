// NPL engine throughput: our compiled evaluator on the two bundled reference policies and on
// generated 50/100/200/400-rule policies, against Cedar (cedar-wasm, pre-parsed policy set) on
// equivalent rules, in the same process. Set NPL_REFERENCE_ENGINE to a module outside this
// repository exporting the reference `evaluatePolicy({ policy, context })` to measure it too.
//
// Timing: each measurement runs the evaluator over a fixed, cycled input set in batches and
// reports the median of several rounds (ns per evaluation, evaluations per second).
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import {
  compilePolicy,
  EU_AI_ACT_ART5_PROHIBITED,
  evaluatePolicy,
  NATO_PROU_STRICT_FINANCIAL,
  type NplContext,
  type NplPolicy,
  parsePolicy,
} from '../../shared/npl/index.js';
import { keepAlive, measureNsPerCall } from './measure.js';
import type { BenchContext, BenchRow } from './run.js';

function row(engine: string, policy: string, ns: number, baseline?: number): BenchRow {
  return {
    engine,
    policy,
    'ns/eval': ns < 1000 ? Number(ns.toFixed(1)) : Math.round(ns),
    'evals/s': Math.round(1e9 / ns).toLocaleString('en-US'),
    'vs ours': baseline === undefined ? '1×' : `${(ns / baseline).toFixed(1)}×`,
  };
}

const ACTION_CODE: Record<string, number> = { ALLOW: 0, SIMULATE: 1, REQUIRE_HUMAN: 2, BLOCK: 3 };

const NATO_INPUTS: NplContext[] = [
  { tool: { name: 'wire_transfer', args: { amount: 25_000 } }, args: { amount: 25_000 } },
  { tool: { name: 'drop_table', args: { table: 'users' } }, args: { table: 'users' } },
  { tool: { name: 'query_positions', args: { limit: 10 } }, args: { limit: 10 } },
  { tool: { name: 'wire_transfer', args: { amount: 500 } }, args: { amount: 500 } },
];

const EU_INPUTS: NplContext[] = [
  {
    tool: { name: 'score' },
    args: { actionType: 'EVALUATE_USER_TRUST', metadataSource: 'SOCIAL_BEHAVIOR' },
  },
  { tool: { name: 'camera' }, args: { hasBiometricInference: true } },
  {
    tool: { name: 'profile' },
    args: { actionType: 'CRIMINAL_RISK_PROFILE', criminalBasedOn: 'PHYSICAL_BEHAVIOR' },
  },
  { tool: { name: 'search' }, args: { actionType: 'SEARCH', query: 'weather' } },
];

function generatedPolicy(n: number): NplPolicy {
  return parsePolicy({
    version: '1.0.0',
    policyName: `generated-${n}`,
    targetAgents: ['*'],
    rules: Array.from({ length: n }, (_, i) => ({
      ruleId: `rule_${i}`,
      action: i % 2 === 0 ? 'BLOCK' : 'REQUIRE_HUMAN',
      condition: `tool.name == 'tool_${i}' && args.amount > ${i}`,
      alertSeverity: 'MEDIUM',
    })),
  });
}

function generatedInputs(n: number): NplContext[] {
  // Worst cases: no rule matches, or only the last one does (every rule is evaluated).
  return [
    { tool: { name: 'tool_none' }, args: { amount: 1e6 } },
    { tool: { name: `tool_${n - 1}` }, args: { amount: 1e6 } },
  ];
}

// Cedar equivalents: every NPL rule becomes a `permit` annotated with its rule id; the first
// satisfied rule in document order is the NPL decision, so the work (evaluate every rule) matches.
const CEDAR_SCOPE = 'permit(principal, action, resource)';
const NATO_CEDAR = [
  ['block_destructive_data_tools', '["drop_table", "delete_user"].contains(context.tool.name)'],
  [
    'require_human_large_wire_transfer',
    'context.tool.name == "wire_transfer" && context.args has amount && context.args.amount > 10000',
  ],
];
const EU_PAIRS = [
  ['EVALUATE_USER_TRUST', 'metadataSource', 'SOCIAL_BEHAVIOR'],
  ['GENERATE_UI_PROMPT', 'urgencyTactic', 'ARTIFICIAL'],
  ['INFER_EMOTION', 'emotionContext', 'WORKPLACE'],
  ['CRIMINAL_RISK_PROFILE', 'criminalBasedOn', 'PHYSICAL_BEHAVIOR'],
] as const;
const EU_CEDAR = [
  ...EU_PAIRS.map(([type, field, value], i) => [
    `art5_${i}`,
    `context.args has actionType && context.args.actionType == "${type}" && context.args has ${field} && context.args.${field} == "${value}"`,
  ]),
  [
    'art5_biometric',
    'context.args has hasBiometricInference && context.args.hasBiometricInference == true',
  ],
];

function cedarRules(n: number): string[][] {
  return Array.from({ length: n }, (_, i) => [
    `rule_${i}`,
    `context.tool.name == "tool_${i}" && context.args has amount && context.args.amount > ${i}`,
  ]);
}

function cedarEvaluator(id: string, rules: string[][], inputs: NplContext[]) {
  const text = rules
    .map(([rid, cond]) => `@id("${rid}")\n${CEDAR_SCOPE} when { ${cond} };`)
    .join('\n');
  const parsed = cedar.preparsePolicySet(id, { staticPolicies: text });
  if (parsed.type !== 'success') throw new Error(`cedar: ${JSON.stringify(parsed.errors)}`);
  const calls = inputs.map((ctx) => ({
    principal: { type: 'Agent', id: 'agent' },
    action: { type: 'Action', id: 'call' },
    resource: { type: 'Tool', id: String(ctx.tool?.name) },
    context: { tool: { name: String(ctx.tool?.name) }, args: toCedar(ctx.args ?? {}) },
    preparsedPolicySetId: id,
    entities: [],
  }));
  const check = cedar.statefulIsAuthorized(calls[0]!);
  if (check.type !== 'success') throw new Error(`cedar: ${JSON.stringify(check.errors)}`);
  return (i: number) => {
    const answer = cedar.statefulIsAuthorized(calls[i % calls.length]!);
    return answer.type === 'success' ? answer.response.diagnostics.reason.length : 0;
  };
}

function toCedar(
  args: Readonly<Record<string, unknown>>,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(args)) {
    if (typeof v === 'number') out[k] = Math.round(v);
    else if (typeof v === 'string' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

type ReferenceEvaluate = (input: { policy: NplPolicy; context: NplContext }) => { action: string };

async function loadReference(): Promise<ReferenceEvaluate | undefined> {
  const path = process.env.NPL_REFERENCE_ENGINE;
  if (!path) return undefined;
  const mod = (await import(path)) as { evaluatePolicy?: ReferenceEvaluate };
  if (typeof mod.evaluatePolicy !== 'function') {
    throw new Error(`${path} does not export evaluatePolicy({ policy, context })`);
  }
  return mod.evaluatePolicy;
}

function ours(policy: NplPolicy, inputs: NplContext[]) {
  const compiled = compilePolicy(policy);
  const mask = inputs.length - 1; // input sets have 2 or 4 entries
  return (i: number) => ACTION_CODE[evaluatePolicy(compiled, inputs[i & mask]!).action]!;
}

export default async function nplBench(ctx: BenchContext): Promise<void> {
  const reference = await loadReference();
  const cases = [
    {
      name: 'nato-prou-strict-financial (2 rules)',
      policy: NATO_PROU_STRICT_FINANCIAL,
      inputs: NATO_INPUTS,
      cedarRules: NATO_CEDAR,
    },
    {
      name: 'eu-ai-act-art5-prohibited (5 rules)',
      policy: EU_AI_ACT_ART5_PROHIBITED,
      inputs: EU_INPUTS,
      cedarRules: EU_CEDAR,
    },
  ];
  const rows: BenchRow[] = [];
  for (const c of cases) {
    ctx.progress(c.name);
    const base = measureNsPerCall(ours(c.policy, c.inputs));
    rows.push(row('npl (ours)', c.name, base));
    const cedarNs = measureNsPerCall(cedarEvaluator(c.policy.policyName, c.cedarRules, c.inputs));
    rows.push(row('cedar-wasm', c.name, cedarNs, base));
    if (reference) {
      const evaluate = reference;
      const refNs = measureNsPerCall(
        (i) =>
          ACTION_CODE[
            evaluate({ policy: c.policy, context: c.inputs[i % c.inputs.length]! }).action
          ]!,
      );
      rows.push(row('reference', c.name, refNs, base));
    }
  }
  ctx.report('Reference policies (fixed inputs, cycled)', rows);

  const scaling: BenchRow[] = [];
  for (const n of [50, 100, 200, 400]) {
    ctx.progress(`generated ${n}-rule policy`);
    const policy = generatedPolicy(n);
    const inputs = generatedInputs(n);
    const ns = measureNsPerCall(ours(policy, inputs));
    const cedarNs = measureNsPerCall(cedarEvaluator(`generated-${n}`, cedarRules(n), inputs));
    scaling.push({
      ...row('npl (ours)', `generated ${n} rules`, ns),
      'ns/rule': Number((ns / n).toFixed(2)),
    });
    scaling.push({
      ...row('cedar-wasm', `generated ${n} rules`, cedarNs, ns),
      'ns/rule': Number((cedarNs / n).toFixed(2)),
    });
  }
  ctx.report('Generated policies, worst case (no match / last rule matches)', scaling);
  keepAlive();
}
