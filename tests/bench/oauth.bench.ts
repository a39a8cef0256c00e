import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import pino from 'pino';
import { createLogger } from '../../cli/logger.js';
import { createAgent } from '../../control-plane/services/agents.js';
import { TOKEN_PATH } from '../../data-plane/routes/oauth/discovery.js';
import { basic, registerClientOf } from '../data-plane/oauth/oauth-fixture.js';
import { inspectBody, startTestGateway, type TestGateway } from '../support/gateway.js';
import { startEchoUpstream } from './echo-upstream.js';
import type { LatencySummary, LoadRequest } from './load.js';
import type { BenchContext, BenchRow } from './run.js';
import { runSequential, runThroughput, sequentialRow, type ThroughputResult } from './run-load.js';

type Throughput = ThroughputResult;

const TOKEN_CONNECTIONS = [10, 50] as const;
const TOKEN_WARMUP_SECONDS = 1;
const TOKEN_DURATION_SECONDS = 5;
const FORWARD_CONNECTIONS = 50;
const FORWARD_WARMUP_SECONDS = 2;
const FORWARD_DURATION_SECONDS = 5;
/** none and mcp_as alternate for this many rounds, so that machine drift hits both. */
const ROUNDS = 2;
const SEQUENTIAL_WARMUP = 300;
const SEQUENTIAL_CALLS = 2_000;
/** mcp_as may cost at most this share of the none figure (p50 up, throughput down). */
const BUDGET_RATIO = 0.1;

const SERVER_ID = 'echo';
const FORM = 'application/x-www-form-urlencoded';

function throughput(
  request: LoadRequest,
  connections: number,
  warmupSeconds: number,
  durationSeconds: number,
): Promise<ThroughputResult> {
  return runThroughput({ request, connections, warmupSeconds, durationSeconds });
}

/** A gateway as `npm start` runs it: its logger at info (to /dev/null), no access log. */
function startGateway(): Promise<TestGateway> {
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
  return startTestGateway('pglite', { logger });
}

const ms = (value: number) => Number(value.toFixed(3));
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const pct = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} %`;

function loadRow(scenario: string, connections: number, r: Throughput): BenchRow {
  return {
    scenario,
    connections,
    'req/s': Math.round(r.rps),
    'p50 ms': ms(r.p50),
    'p90 ms': ms(r.p90),
    'p99 ms': ms(r.p99),
    'max ms': ms(r.max),
    'unexpected/errors': `${r.unexpected}/${r.errors}`,
  };
}

export default async function oauthBench(ctx: BenchContext): Promise<void> {
  const gateways: TestGateway[] = [];
  ctx.progress('starting the upstream, the bare endpoint and a PGlite gateway (npm start logging)');
  const upstream = await startEchoUpstream();
  const bare = Fastify({ logger: false });
  // Takes the token request's form body as it is, so that both answer the same request bytes.
  bare.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, body);
  });
  bare.post('/x', async () => ({ ok: true }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/x`;
  try {
    const gateway = await startGateway();
    gateways.push(gateway);

    // ---- 1. Token endpoint: client_credentials, client_secret_basic ---------------------
    const issuing = gateway.tenant;
    await gateway.registerServer({ tenantId: issuing.id, serverId: SERVER_ID, url: upstream.url });
    const { id: agentId } = await createAgent(gateway.db, {
      tenantId: issuing.id,
      name: `agent-${randomBytes(3).toString('hex')}`,
      allowedTools: ['*'],
      mcpAudiences: [`mcp://${SERVER_ID}`],
      publicKey: `test-key-${randomBytes(16).toString('hex')}`,
    });
    const { clientId, secret: clientSecret } = await registerClientOf(gateway, {
      tenantId: issuing.id,
      agentId,
      actor: 'bench',
    });
    await gateway.sync();
    if (!clientSecret) throw new Error('the bench client got no secret');
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      resource: `mcp://${SERVER_ID}`,
    }).toString();
    const tokenRequest: LoadRequest = {
      url: `${gateway.url}${TOKEN_PATH}`,
      method: 'POST',
      headers: { 'content-type': FORM, authorization: basic(clientId, clientSecret) },
      body: form,
      expectStatus: 200,
    };
    const probe = await fetch(tokenRequest.url, {
      method: 'POST',
      headers: tokenRequest.headers,
      body: form,
    });
    const probeBody = (await probe.json()) as { access_token?: string };
    if (probe.status !== 200 || !probeBody.access_token) {
      throw new Error(`token endpoint: ${probe.status} ${JSON.stringify(probeBody)}`);
    }
    const bareRequest: LoadRequest = { ...tokenRequest, url: bareUrl };

    const tokenRows: BenchRow[] = [];
    const ratioRows: BenchRow[] = [];
    for (const connections of TOKEN_CONNECTIONS) {
      ctx.progress(`bare Fastify (form POST), ${connections} connections`);
      const b = await throughput(
        bareRequest,
        connections,
        TOKEN_WARMUP_SECONDS,
        TOKEN_DURATION_SECONDS,
      );
      tokenRows.push(loadRow('bare Fastify POST (same form body)', connections, b));
      ctx.progress(`POST ${TOKEN_PATH} client_credentials, ${connections} connections`);
      const t = await throughput(
        tokenRequest,
        connections,
        TOKEN_WARMUP_SECONDS,
        TOKEN_DURATION_SECONDS,
      );
      tokenRows.push(
        loadRow('POST /oauth/token client_credentials (client_secret_basic)', connections, t),
      );
      ratioRows.push({
        connections,
        'token req/s': Math.round(t.rps),
        'bare req/s': Math.round(b.rps),
        'throughput ratio': `${((t.rps / b.rps) * 100).toFixed(1)} % of bare`,
        'p99 ratio': `${(t.p99 / b.p99).toFixed(2)}× bare`,
        budget: 'none in DESIGN.md §10: report only',
      });
    }
    ctx.report(
      `Token endpoint, client_credentials + client_secret_basic, one client, one resource (autocannon in a child process, ${TOKEN_WARMUP_SECONDS} s warm-up + ${TOKEN_DURATION_SECONDS} s; every answer a freshly signed EdDSA token, issuance recorded by the batched writer)`,
      tokenRows,
    );
    ctx.report('Token endpoint against the bare endpoint (same run)', ratioRows);

    // ---- 2. Inspect allow with a production forward: oauthMode mcp_as vs none -------------
    const plain = await gateway.addTenant('oauth-none');
    const minting = await gateway.addTenant('oauth-mcp-as');
    const policy = {
      trustedServers: [SERVER_ID],
      allowedModes: ['production', 'simulation', 'shadow'] as const,
    };
    for (const [tenant, oauthMode] of [
      [plain, 'none'],
      [minting, 'mcp_as'],
    ] as const) {
      await gateway.registerServer({ tenantId: tenant.id, serverId: SERVER_ID, url: upstream.url });
      await gateway.setPolicy(tenant.id, {
        ...policy,
        allowedModes: [...policy.allowedModes],
        oauthMode,
      });
    }
    const inspectUrl = `${gateway.url}/api/v1/mcp/gateway/inspect`;
    const forward = (tenant: typeof plain): LoadRequest => ({
      url: inspectUrl,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.key}` },
      body: JSON.stringify(inspectBody(tenant.agentId, { server: SERVER_ID, mode: 'production' })),
      expectStatus: 200,
    });
    const noneRequest = forward(plain);
    const mcpAsRequest = forward(minting);
    for (const [label, request] of [
      ['none', noneRequest],
      ['mcp_as', mcpAsRequest],
    ] as const) {
      const answer = await gateway.inspect(request.body, {
        key: (label === 'none' ? plain : minting).key,
      });
      if (answer.status !== 200 || answer.body.decision !== 'allow') {
        throw new Error(`forward (${label}): ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
    const issuedBefore = await forwardMints(gateway);

    ctx.progress(
      `inspect → production forward, sequential, none / mcp_as interleaved (${SEQUENTIAL_CALLS} each)`,
    );
    const [noneSeq, mcpAsSeq] = (await runSequential(
      [noneRequest, mcpAsRequest],
      SEQUENTIAL_WARMUP,
      SEQUENTIAL_CALLS,
    )) as [LatencySummary, LatencySummary];
    ctx.report(
      `Inspect allow → production forward, sequential, interleaved, ${SEQUENTIAL_CALLS} calls each (same gateway, same upstream)`,
      [
        sequentialRow('oauthMode none', noneSeq),
        sequentialRow('oauthMode mcp_as (token cache)', mcpAsSeq),
      ],
    );

    const loadRows: BenchRow[] = [];
    const noneRuns: Throughput[] = [];
    const mcpAsRuns: Throughput[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other.
      const order = round % 2 === 1 ? (['none', 'mcp_as'] as const) : (['mcp_as', 'none'] as const);
      for (const mode of order) {
        ctx.progress(
          `round ${round}: forward, oauthMode ${mode}, ${FORWARD_CONNECTIONS} connections`,
        );
        const r = await throughput(
          mode === 'none' ? noneRequest : mcpAsRequest,
          FORWARD_CONNECTIONS,
          FORWARD_WARMUP_SECONDS,
          FORWARD_DURATION_SECONDS,
        );
        (mode === 'none' ? noneRuns : mcpAsRuns).push(r);
        loadRows.push(loadRow(`oauthMode ${mode} (round ${round})`, FORWARD_CONNECTIONS, r));
      }
    }
    const mintedDuring = (await forwardMints(gateway)) - issuedBefore;
    ctx.report(
      `Inspect allow → production forward under load (autocannon in a child process, ${FORWARD_WARMUP_SECONDS} s warm-up + ${FORWARD_DURATION_SECONDS} s; tokens minted for forwards during the measurements: ${mintedDuring})`,
      loadRows,
    );

    const noneRps = mean(noneRuns.map((r) => r.rps));
    const mcpAsRps = mean(mcpAsRuns.map((r) => r.rps));
    const noneP99 = mean(noneRuns.map((r) => r.p99));
    const mcpAsP99 = mean(mcpAsRuns.map((r) => r.p99));
    const p50Change = mcpAsSeq.p50 / noneSeq.p50 - 1;
    const rpsChange = mcpAsRps / noneRps - 1;
    const within = `within ${BUDGET_RATIO * 100} % of none`;
    ctx.report('Cost of oauthMode mcp_as on a production forward (issue 12 budget)', [
      {
        measure: 'sequential p50 (one call at a time)',
        none: `${ms(noneSeq.p50)} ms`,
        mcp_as: `${ms(mcpAsSeq.p50)} ms`,
        difference: pct(p50Change),
        budget: within,
        result: p50Change <= BUDGET_RATIO ? 'met' : 'missed',
      },
      {
        measure: 'sequential p99',
        none: `${ms(noneSeq.p99)} ms`,
        mcp_as: `${ms(mcpAsSeq.p99)} ms`,
        difference: pct(mcpAsSeq.p99 / noneSeq.p99 - 1),
        budget: 'report only',
        result: '—',
      },
      {
        measure: `throughput at ${FORWARD_CONNECTIONS} connections (mean of ${ROUNDS} rounds)`,
        none: `${Math.round(noneRps)} req/s`,
        mcp_as: `${Math.round(mcpAsRps)} req/s`,
        difference: pct(rpsChange),
        budget: within,
        result: rpsChange >= -BUDGET_RATIO ? 'met' : 'missed',
      },
      {
        measure: `p99 at ${FORWARD_CONNECTIONS} connections (mean of ${ROUNDS} rounds)`,
        none: `${ms(noneP99)} ms`,
        mcp_as: `${ms(mcpAsP99)} ms`,
        difference: pct(mcpAsP99 / noneP99 - 1),
        budget: 'report only',
        result: '—',
      },
    ]);
  } finally {
    for (const g of gateways) await g.close();
    await bare.close();
    upstream.child.kill();
  }
}

/** Tokens the data plane has minted for forwards so far (cache misses). */
async function forwardMints(gateway: TestGateway): Promise<number> {
  const issued = await gateway.runtime.metrics.oauthTokensIssued.get();
  return issued.values.find((v) => v.labels.kind === 'forward')?.value ?? 0;
}
