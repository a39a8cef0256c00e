import { describe, expect, it } from 'vitest';
import {
  compileExfiltrationDetector,
  type ExfiltrationDetectorOptions,
} from '../../../data-plane/inspection/index.js';

const ALL_ON: ExfiltrationDetectorOptions = {
  detectSecrets: true,
  bulkExportLimit: 1000,
  checkDestinations: true,
  allowedDomains: ['allowed.com', 'Corp.Example.ORG.', '10.0.0.5'],
};
const detect = compileExfiltrationDetector(ALL_ON);

function call(args: unknown, toolName = 'tool') {
  return { method: 'tools/call', toolName, args };
}

// Test credentials are assembled at run time so that secret scanners do not flag this file.
const join = (...parts: string[]) => parts.join('');
const PEM = join(
  '-----BEGIN RSA ',
  'PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x9k\n-----END RSA PRIVATE KEY-----',
);
const AWS_ID = join('AKIA', 'IOSFODNN7EXAMPLE');
const AWS_SECRET = join('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY');
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '42', name: 'x' })}.${join('SflKxwRJSMeKKF2QT4fwpM', 'eJf36POk6yJV_adQssw5c')}`;
const NOT_JWT = `${b64url({ typ: 'x' })}.${b64url({ a: 1 })}.c2ln`;
const GH = join('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');
const SLACK = join('xoxb-', '2401234567-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx');
const STRIPE = join('sk_live_', '51H8xY2eZvKYlo2C0aBcDeFgHiJk');
const OPENAI = join('sk-', 'proj-Z7q9X2vB8nM4kL1pR6tY3wE5uI0oA9sD');
const RANDOM = join('Zx8Qp2Lr7Vn4Ks9Tw1Ym6Hb3', 'Jd5Fc0Ga8Re2Nu7Mi4Oy');
const GCP_SA = JSON.stringify({ type: 'service_account', private_key: '…', client_email: 'x' });
const AZURE = `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${join('Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50', 'uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==')};EndpointSuffix=core.windows.net`;

type Row = [name: string, args: unknown, kind: string | null, detail?: string];

const ROWS: Row[] = [
  // secrets
  ['PEM private key', { body: PEM }, 'secret', 'private key (PEM)'],
  ['AWS access key id', { note: `key ${AWS_ID} here` }, 'secret', 'AWS access key id'],
  [
    'AWS secret by key name',
    { aws_secret_access_key: AWS_SECRET },
    'secret',
    'AWS secret access key',
  ],
  ['JWT', { headers: { Authorization: `Bearer ${JWT}` } }, 'secret', 'JWT'],
  ['eyJ segments without alg are not a JWT', { v: NOT_JWT }, null],
  ['GitHub token', { token: GH }, 'secret', 'GitHub token'],
  ['Slack token', { t: SLACK }, 'secret', 'Slack token'],
  ['Stripe key', { t: STRIPE }, 'secret', 'Stripe secret key'],
  ['sk- key', { t: OPENAI }, 'secret', 'API secret key (sk-)'],
  ['GCP service account JSON', { creds: GCP_SA }, 'secret', 'GCP service account key'],
  ['Azure connection string', { conn: AZURE }, 'secret', 'Azure storage account key'],
  ['high-entropy token', { t: RANDOM }, 'secret', 'high-entropy token'],
  ['UUID', { id: '550e8400-e29b-41d4-a716-446655440000' }, null],
  ['git SHA', { commit: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3' }, null],
  [
    'SHA-256 digest',
    { digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    null,
  ],
  ['a sentence', { text: 'Please summarise the quarterly report and send it to the team.' }, null],
  ['a long identifier', { fn: 'getUserAccountSettingsForOrganizationV2' }, null],
  ['a file path', { path: '/Users/JohnSmith/Documents/Projects2024/report-final.docx' }, null],
  ['short words', { a: 'hello', b: 'world' }, null],
  // destinations
  ['allowed subdomain', { url: 'https://api.allowed.com/x' }, null],
  ['allowed apex, port, path', { url: 'https://allowed.com:8443/a?b=c#d' }, null],
  ['uppercase and trailing dot', { url: 'HTTPS://API.ALLOWED.COM./x' }, null],
  ['allow-list entry normalised', { url: 'https://corp.example.org/hook' }, null],
  [
    'suffix trick',
    { url: 'https://allowed.com.evil.io' },
    'destination',
    'https URL to allowed.com.evil.io',
  ],
  ['lookalike', { url: 'https://badallowed.com/' }, 'destination', 'https URL to badallowed.com'],
  [
    'userinfo trick',
    { url: 'https://allowed.com@evil.io/' },
    'destination',
    'https URL to evil.io',
  ],
  [
    'backslash trick',
    { url: 'https://evil.io\\@allowed.com/' },
    'destination',
    'https URL to evil.io',
  ],
  ['percent-encoded host', { url: 'https://%65vil.io/' }, 'destination', 'https URL to evil.io'],
  [
    'IDN host',
    { url: 'https://bücher.example/' },
    'destination',
    'https URL to xn--bcher-kva.example',
  ],
  ['IPv4 not listed', { url: 'http://1.2.3.4/x' }, 'destination', 'http URL to 1.2.3.4'],
  ['IPv4 listed', { url: 'http://10.0.0.5:9000/x' }, null],
  ['IPv4 as a number', { url: 'http://167772165/' }, null],
  ['IPv6 literal', { url: 'http://[::1]:8080/' }, 'destination', 'http URL to [::1]'],
  ['webhook in prose', { msg: 'post it to https://hooks.evil.io/T1/B2 now' }, 'destination'],
  ['s3 bucket', { target: 's3://exfil-bucket/dump.csv' }, 'destination', 's3 URL to exfil-bucket'],
  [
    'database URL',
    { dsn: 'postgres://u:p@db.evil.io:5432/x' },
    'destination',
    'postgres URL to db.evil.io',
  ],
  ['template placeholder stays in the host', { url: 'https://{t}.x.io/' }, 'destination'],
  [
    'unparseable host fails closed',
    { url: 'https://%zz/' },
    'destination',
    'URL with an unparseable host',
  ],
  ['URL in parentheses', { text: '(see https://api.allowed.com/docs)' }, null],
  ['file URL is local', { src: 'file:///etc/hosts' }, null],
  ['mailto', { to: 'mailto:x@evil.io' }, 'destination', 'email to evil.io'],
  ['email', { to: 'bob@evil.io' }, 'destination', 'email to evil.io'],
  ['allowed email', { to: 'bob@allowed.com' }, null],
  ['allowed subdomain email, sentence end', { to: 'write to bob@eu.allowed.com.' }, null],
  ['npm package@version', { pkg: 'lodash@4.17.21' }, null],
  ['scoped package', { pkg: '@types/node' }, null],
  ['handle', { who: '@alice' }, null],
  // bulk export
  ['limit 50', { limit: 50 }, null],
  ['limit 5000', { limit: 5000 }, 'bulk-export', 'limit 5000 > 1000'],
  ['pageSize 1000 (equal)', { pageSize: 1000 }, null],
  ['page_size as a string', { page_size: '2500' }, 'bulk-export', 'page_size 2500 > 1000'],
  ['$top', { $top: 10_000 }, 'bulk-export'],
  ['maxResults', { options: { maxResults: 100000 } }, 'bulk-export'],
  ['limit -1 means unlimited', { limit: -1 }, 'bulk-export', 'limit -1 (unlimited)'],
  ['an unrelated number', { amount: 50_000 }, null],
  ['SQL LIMIT 10', { sql: 'SELECT * FROM users LIMIT 10' }, null],
  [
    'SQL LIMIT 5000',
    { sql: 'SELECT * FROM users LIMIT 5000' },
    'bulk-export',
    'SQL LIMIT 5000 > 1000',
  ],
  ['SQL LIMIT offset, count', { sql: 'SELECT a FROM t LIMIT 10, 9000' }, 'bulk-export'],
  ['SQL FETCH FIRST', { sql: 'SELECT a FROM t FETCH FIRST 20000 ROWS ONLY' }, 'bulk-export'],
  ['SQL TOP', { sql: 'SELECT TOP 50000 * FROM t' }, 'bulk-export', 'SQL TOP 50000 > 1000'],
  ['SQL LIMIT in a string literal', { sql: "SELECT 'LIMIT 5000' FROM t LIMIT 5" }, null],
  ['un-LIMITed SELECT does not fire', { sql: 'SELECT * FROM users' }, null],
  ['INTO OUTFILE', { sql: "SELECT * FROM users INTO OUTFILE '/tmp/u.csv'" }, 'bulk-export'],
  ['COPY TO', { sql: 'COPY users TO STDOUT WITH CSV' }, 'bulk-export', 'COPY TO'],
  ['COPY FROM is an import', { sql: "COPY users FROM '/tmp/u.csv'" }, null],
  ['prose with limit', { text: 'the limit 5000 applies' }, null],
];

describe('exfiltration detector', () => {
  it.each(ROWS)('%s', (_name, args, kind, detail) => {
    const signal = detect(call(args));
    if (kind === null) {
      expect(signal).toBeNull();
    } else {
      expect(signal?.kind).toBe(kind);
      if (detail !== undefined) expect(signal?.detail).toBe(detail);
    }
  });

  it('never puts the secret value in the signal', () => {
    for (const value of [PEM, AWS_ID, JWT, GH, SLACK, STRIPE, OPENAI, RANDOM]) {
      const signal = detect(call({ value }));
      expect(signal?.kind).toBe('secret');
      expect(JSON.stringify(signal)).not.toContain(value.slice(4, 14));
    }
  });

  it('names the argument path', () => {
    expect(detect(call({ batch: [{ to: 'x@evil.io' }] }))).toEqual({
      kind: 'destination',
      detail: 'email to evil.io',
      path: 'arguments.batch[0].to',
    });
  });

  it('export tools fire with all: true', () => {
    expect(detect(call({ all: true }, 'export_customers'))).toEqual({
      kind: 'bulk-export',
      detail: 'export tool with all: true',
      path: 'arguments.all',
    });
    expect(detect(call({ all: true }, 'list_customers'))).toBeNull();
    expect(detect(call({ id: 3 }, 'export_report'))).toBeNull();
  });
});

describe('exfiltration detector: switches', () => {
  const secretArgs = { t: GH };
  const urlArgs = { url: 'https://evil.io/' };
  const bulkArgs = { limit: 1_000_000 };

  it('each heuristic is switched separately', () => {
    const secretsOnly = compileExfiltrationDetector({
      detectSecrets: true,
      bulkExportLimit: null,
      checkDestinations: false,
      allowedDomains: [],
    });
    expect(secretsOnly(call(secretArgs))?.kind).toBe('secret');
    expect(secretsOnly(call(urlArgs))).toBeNull();
    expect(secretsOnly(call(bulkArgs))).toBeNull();

    const bulkOnly = compileExfiltrationDetector({
      detectSecrets: false,
      bulkExportLimit: 100,
      checkDestinations: false,
      allowedDomains: [],
    });
    expect(bulkOnly(call(secretArgs))).toBeNull();
    expect(bulkOnly(call(bulkArgs))?.kind).toBe('bulk-export');

    const destinationsOnly = compileExfiltrationDetector({
      detectSecrets: false,
      bulkExportLimit: null,
      checkDestinations: true,
      allowedDomains: ['allowed.com'],
    });
    expect(destinationsOnly(call(urlArgs))?.kind).toBe('destination');
    expect(destinationsOnly(call(secretArgs))).toBeNull();
  });

  it('with everything off the detector inspects nothing', () => {
    const off = compileExfiltrationDetector({
      detectSecrets: false,
      bulkExportLimit: null,
      checkDestinations: false,
      allowedDomains: [],
    });
    expect(off(call({ t: GH, url: 'https://evil.io', limit: 1e9 }))).toBeNull();
    expect(off(call('x'.repeat(10_000_000)))).toBeNull();
  });

  it('an empty allow-list makes every destination fire', () => {
    const strict = compileExfiltrationDetector({
      detectSecrets: false,
      bulkExportLimit: null,
      checkDestinations: true,
      allowedDomains: [],
    });
    expect(strict(call({ url: 'https://example.com/' }))?.kind).toBe('destination');
    expect(strict(call({ to: 'a@example.com' }))?.kind).toBe('destination');
    expect(strict(call({ text: 'no destinations here' }))).toBeNull();
  });

  it('rejects invalid options when compiled', () => {
    expect(() => compileExfiltrationDetector({ ...ALL_ON, bulkExportLimit: Number.NaN })).toThrow(
      RangeError,
    );
    expect(() =>
      compileExfiltrationDetector({ ...ALL_ON, allowedDomains: ['exa mple.com'] }),
    ).toThrow(RangeError);
  });
});
