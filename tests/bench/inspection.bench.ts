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
import { keepAlive, measureNsPerCall } from './measure.js';
import type { BenchContext, BenchRow } from './run.js';

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
  rows.push(
    row('destructive', 'benign (4 typical calls)', measureNsPerCall(cycle(destructive, BENIGN))),
  );
  rows.push(
    row(
      'destructive',
      'destructive (SQL, shell, HTTP, name)',
      measureNsPerCall(cycle(destructive, DESTRUCTIVE)),
    ),
  );
  ctx.progress('exfiltration');
  rows.push(
    row('exfiltration', 'benign (4 typical calls)', measureNsPerCall(cycle(exfiltration, BENIGN))),
  );
  rows.push(
    row(
      'exfiltration',
      'exfiltrating (URL, token, bulk, email)',
      measureNsPerCall(cycle(exfiltration, EXFILTRATION)),
    ),
  );
  ctx.report('Inspection detectors (median ns per call, default limits)', rows);
  keepAlive();
}
