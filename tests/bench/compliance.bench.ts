// Public compliance batch validation: throughput of a typical 10-item batch over real HTTP
// (autocannon against 127.0.0.1), and the wall time of adversarial batches that sit just under
// the work budget or at the size limits — the numbers behind the defaults in limits.ts. The load
// generator runs in this process, so the throughput figure is a lower bound.
import { createRequire } from 'node:module';
import pino from 'pino';
import { COMPLIANCE_BATCH_PATH } from '../../data-plane/routes/compliance/index.js';
import { DEFAULT_COMPLIANCE_LIMITS } from '../../data-plane/routes/compliance/limits.js';
import { createReadiness } from '../../http-edge/health.js';
import { buildPublicApp } from '../support/public-app.js';
import type { BenchContext, BenchRow } from './run.js';

// autocannon ships no type declarations: the part used here.
type Autocannon = (options: Record<string, unknown>) => Promise<{
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
}>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const TYPICAL_POLICY = `version: "1.0.0"
policyName: payments-guard
targetAgents: ["*"]
rules:
  - ruleId: block_drop
    action: BLOCK
    condition: "tool.name in ['drop_table', 'delete_user', 'truncate']"
    alertSeverity: CRITICAL
  - ruleId: human_large_transfer
    action: REQUIRE_HUMAN
    condition: "tool.name == 'wire_transfer' && args.amount > 10000"
    alertSeverity: MEDIUM
  - ruleId: block_external_iban
    action: BLOCK
    condition: "args.iban.matches('^(DE|FR|NL)[0-9]{2}') == false && tool.name == 'wire_transfer'"
    alertSeverity: MEDIUM
  - ruleId: simulate_staging
    action: SIMULATE
    condition: "mode == 'staging'"
    alertSeverity: LOW
`;

function typicalBatch(): string {
  const calls = [
    { tool: 'wire_transfer', args: { amount: 25_000, iban: 'DE89370400440532013000' } },
    { tool: 'wire_transfer', args: { amount: 50, iban: 'GB29NWBK60161331926819' } },
    { tool: 'drop_table', args: { table: 'users' } },
    { tool: 'query', args: { sql: 'select 1' }, context: { mode: 'staging' } },
    { tool: 'query', args: { sql: 'select 2' }, agentRole: 'analyst' },
  ];
  const items = Array.from({ length: 10 }, (_, i) =>
    i % 5 === 4
      ? { id: `pin-${i}`, policyUri: 'svc://nato-prou-strict-financial@1.0.0', toolCalls: calls }
      : { id: `item-${i}`, policy: TYPICAL_POLICY, toolCalls: calls },
  );
  return JSON.stringify({ items });
}

function policyWith(conditions: readonly string[]) {
  return {
    version: '1.0.0',
    policyName: 'adversary',
    targetAgents: ['*'],
    rules: conditions.map((condition, i) => ({
      ruleId: `r${i}`,
      action: 'BLOCK',
      condition,
      alertSeverity: 'LOW',
    })),
  };
}

function nonAscii(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(0x100 + ((i * 7919) % 60_000));
  return s;
}

/** Batches built to cost as much as the limits allow (each under the work budget). */
function adversaries(): { name: string; body: string }[] {
  const calls = (n: number, args: object) => Array.from({ length: n }, () => ({ tool: 't', args }));
  const contains = Array.from({ length: 4000 }, () => "args.a.contains('zz')").join(' || ');
  const rules = Array.from({ length: 2000 }, (_, i) => `tool.name == 't${i}' && args.n > ${i}`);
  const yamlRules = Array.from(
    { length: 2600 },
    (_, i) =>
      `  - {ruleId: r${i}, action: BLOCK, condition: "tool.name == 'x${i}'", alertSeverity: LOW}`,
  ).join('\n');
  const yaml = `version: "1.0.0"\npolicyName: big\ntargetAgents: ["*"]\nrules:\n${yamlRules}\n`;
  return [
    {
      name: "matches('(.|..){100}c') on non-ASCII text",
      body: JSON.stringify({
        items: [
          {
            policy: policyWith(["args.a.matches('(.|..){100}c')"]),
            toolCalls: calls(3, { a: nonAscii(2500) }),
          },
        ],
      }),
    },
    {
      name: '4 000 × contains on non-ASCII text',
      body: JSON.stringify({
        items: [{ policy: policyWith([contains]), toolCalls: calls(4, { a: nonAscii(1800) }) }],
      }),
    },
    {
      name: '2 000 rules × 300 calls',
      body: JSON.stringify({
        items: [{ policy: policyWith(rules), toolCalls: calls(300, { n: 1 }) }],
      }),
    },
    {
      name: '192 + 192 KiB YAML policies (parse only)',
      body: JSON.stringify({
        items: [yaml.slice(0, 196_000), yaml.slice(0, 196_000)].map((text) => ({
          policy: text.slice(0, text.lastIndexOf('\n  - ')),
        })),
      }),
    },
  ];
}

export default async function compliance(ctx: BenchContext): Promise<void> {
  const app = await buildPublicApp({
    logger: pino({ level: 'silent' }),
    readiness: createReadiness(),
    compliance: { rateLimit: { max: 1_000_000_000 } },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const body = typicalBatch();
    ctx.progress('typical 10-item batch, 10 s of autocannon');
    const result = await autocannon({
      url: `${base}${COMPLIANCE_BATCH_PATH}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 8,
      duration: 10,
    });
    ctx.report('Typical batch: 10 items (8 inline YAML, 2 pins) × 5 tool calls', [
      {
        'body bytes': body.length,
        'requests/s': Math.round(result.requests.average),
        'items/s': Math.round(result.requests.average * 10),
        'p50 ms': result.latency.p50,
        'p99 ms': result.latency.p99,
        non2xx: result.non2xx,
      },
    ]);

    const rows: BenchRow[] = [];
    for (const adversary of adversaries()) {
      ctx.progress(adversary.name);
      const times: number[] = [];
      let status = 0;
      let work = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = process.hrtime.bigint();
        const response = await app.inject({
          method: 'POST',
          url: COMPLIANCE_BATCH_PATH,
          headers: { 'content-type': 'application/json' },
          payload: adversary.body,
        });
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        status = response.statusCode;
        work = (response.json() as { work?: number }).work ?? 0;
      }
      times.sort((a, b) => a - b);
      rows.push({
        batch: adversary.name,
        status,
        'body KiB': Math.round(adversary.body.length / 1024),
        'work units': work.toLocaleString('en-US'),
        'budget used': `${Math.round((100 * work) / DEFAULT_COMPLIANCE_LIMITS.maxWork)} %`,
        'median ms': Number(times[2]!.toFixed(1)),
        'max ms': Number(times[4]!.toFixed(1)),
      });
    }
    ctx.report('Adversarial batches under the default limits (5 runs each)', rows);
  } finally {
    await app.close();
  }
}
