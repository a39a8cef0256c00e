// The client library's cost: a governed tool call (inspect with forward: false, then the tool)
// against the same tool called directly, sequentially, over loopback HTTP to a gateway as
// `npm start` runs it (PGlite, logger at info to /dev/null, one NPL policy evaluated per call).
// With the agent's private key the client also reads its identity (cached) and signs an
// Agent-Proof per call, which the gateway verifies.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { createGatewayClient, type Ed25519PrivateJwk } from '../../client/src/index.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { BenchContext, BenchRow } from './run.js';

const WARMUP = 200;
const CALLS = 2_000;

const POLICY = {
  version: '1.0.0',
  policyName: 'client-bench',
  targetAgents: ['*'],
  rules: [
    {
      ruleId: 'block_secrets',
      action: 'BLOCK',
      condition: "tool.name == 'echo' && args.text == 'secret'",
      alertSeverity: 'CRITICAL',
    },
  ],
};

interface Samples {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly n: number;
}

function summarize(samples: number[]): Samples {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return {
    n: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

async function measure(call: (i: number) => Promise<unknown>): Promise<Samples> {
  for (let i = 0; i < WARMUP; i++) await call(i);
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call(i);
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

const ms = (value: number) => Number(value.toFixed(3));

export default async function clientBench(ctx: BenchContext): Promise<void> {
  ctx.progress('starting a PGlite gateway (npm start logging)');
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  const gateway: TestGateway = await startTestGateway('pglite', { logger });
  try {
    gateway.runtime.keyCustody.useMasterKey(randomBytes(32), 'the bench master key');
    const tenant = gateway.tenant;
    await gateway.registerServer({
      tenantId: tenant.id,
      serverId: 'files',
      url: 'http://127.0.0.1:9/',
    });
    const policy = await gateway.publishPolicy(tenant.id, POLICY);
    await gateway.setPolicy(tenant.id, { trustedServers: ['files'], allowedModes: ['production'] });
    const managerKey = await gateway.addApiKey(tenant.id, ['agents:manage']);
    const spawned = await fetch(`${gateway.url}/api/v1/agents/spawn`, {
      method: 'POST',
      headers: { authorization: `Bearer ${managerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'bench-agent',
        system_prompt: '',
        persona: { tone: 'terse', language: 'en' },
        allowed_tools: ['echo'],
        mcp_audiences: ['mcp://files'],
      }),
    });
    if (spawned.status !== 201) throw new Error(`spawn: ${await spawned.text()}`);
    const { agent, private_key_jwk } = (await spawned.json()) as {
      agent: { id: string };
      private_key_jwk: Ed25519PrivateJwk;
    };
    const base = {
      tenantId: tenant.id,
      agentId: agent.id,
      apiKey: tenant.key,
      baseUrl: gateway.url,
      policy,
      serverId: 'files',
    };
    const echo = async (args: { text: string }) => ({ echoed: args.text });
    const plain = createGatewayClient(base).governTool({ name: 'echo' }, echo);
    const proved = createGatewayClient({ ...base, privateKeyJwk: private_key_jwk }).governTool(
      { name: 'echo' },
      echo,
    );
    const rawBody = (i: number) =>
      JSON.stringify({
        ...inspectBody(agent.id, { mode: 'production', args: { text: `call ${i}` } }),
        policy,
        forward: false,
      });

    ctx.progress(`direct calls (${CALLS})`);
    const direct = await measure((i) => echo({ text: `call ${i}` }));
    ctx.progress(`inspect alone over fetch (${CALLS})`);
    const inspectOnly = await measure(async (i) => {
      const response = await fetch(`${gateway.url}/api/v1/mcp/gateway/inspect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: rawBody(i),
      });
      if (response.status !== 200) throw new Error(`inspect: ${response.status}`);
      await response.arrayBuffer();
    });
    ctx.progress(`governed calls (${CALLS})`);
    const governed = await measure((i) => plain({ text: `call ${i}` }));
    ctx.progress(`governed calls with credential + Agent-Proof (${CALLS})`);
    const withProof = await measure((i) => proved({ text: `call ${i}` }));

    const row = (scenario: string, s: Samples): BenchRow => ({
      scenario,
      samples: s.n,
      'mean ms': ms(s.mean),
      'p50 ms': ms(s.p50),
      'p99 ms': ms(s.p99),
      'overhead p50 ms': ms(s.p50 - direct.p50),
      'overhead p99 ms': ms(s.p99 - direct.p99),
    });
    ctx.report('governed tool call vs the tool called directly (sequential, loopback)', [
      row('tool called directly', direct),
      row('inspect alone (fetch, forward: false)', inspectOnly),
      row('governTool (inspect + tool)', governed),
      row('governTool with credential + Agent-Proof', withProof),
    ]);
  } finally {
    await gateway.close();
  }
}
