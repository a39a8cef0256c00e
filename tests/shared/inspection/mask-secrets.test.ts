import { describe, expect, it } from 'vitest';
import {
  findSecret,
  maskSecrets,
  maskSecretsInString,
  scanSecretSpans,
} from '../../../shared/inspection/index.js';

// Test credentials are assembled at run time so that secret scanners do not flag this file.
const join = (...parts: string[]) => parts.join('');
const GH = join('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');
const AWS_ID = join('AKIA', 'IOSFODNN7EXAMPLE');
const AWS_SECRET = join('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY');
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '42' })}.${join('SflKxwRJSMeKKF2QT4fwpM', 'eJf36POk6yJV_adQssw5c')}`;
const PEM = join(
  '-----BEGIN RSA ',
  'PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x9kZx8Qp2Lr7Vn4Ks9Tw1Ym6Hb3Jd5Fc0Ga8Re2Nu7Mi4Oy\n-----END RSA PRIVATE KEY-----',
);
const AZURE_KEY = join(
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50',
  'uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
);
const RANDOM = join('Zx8Qp2Lr7Vn4Ks9Tw1Ym6Hb3', 'Jd5Fc0Ga8Re2Nu7Mi4Oy');

describe('maskSecretsInString', () => {
  it('replaces a GitHub token and keeps the text around it', () => {
    expect(maskSecretsInString(`use ${GH} to push`)).toBe('use [secret: GitHub token] to push');
  });

  it('replaces an AWS access key id', () => {
    expect(maskSecretsInString(`key=${AWS_ID};`)).toBe('key=[secret: AWS access key id];');
  });

  it('replaces a whole JWT, signature included', () => {
    expect(maskSecretsInString(`Bearer ${JWT}`)).toBe('Bearer [secret: JWT]');
  });

  it('replaces a PEM block from its BEGIN line through its END line, body lines included', () => {
    expect(maskSecretsInString(`before\n${PEM}\nafter`)).toBe(
      'before\n[secret: private key (PEM)]\nafter',
    );
  });

  it('replaces an Azure account key value only', () => {
    expect(maskSecretsInString(`AccountName=a;AccountKey=${AZURE_KEY};EndpointSuffix=x`)).toBe(
      'AccountName=a;AccountKey=[secret: Azure storage account key];EndpointSuffix=x',
    );
  });

  it('replaces every secret of a string, not only the first', () => {
    expect(maskSecretsInString(`${GH} and ${RANDOM}`)).toBe(
      '[secret: GitHub token] and [secret: high-entropy token]',
    );
  });

  it('marks an AWS secret access key by the property name holding it', () => {
    expect(maskSecretsInString(AWS_SECRET, 'aws_secret_access_key')).toBe(
      '[secret: AWS secret access key]',
    );
  });

  it.each([
    'Please summarise the quarterly report and send it to the team.',
    '550e8400-e29b-41d4-a716-446655440000',
    'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
    '/Users/JohnSmith/Documents/Projects2024/report-final.docx',
    'getUserAccountSettingsForOrganizationV2',
    'SELECT * FROM users WHERE id = 42',
  ])('leaves ordinary text alone: %s', (text) => {
    expect(maskSecretsInString(text)).toBe(text);
  });
});

describe('maskSecrets', () => {
  it('walks nested objects and arrays, masking values and keeping keys and other leaves', () => {
    const args = {
      repo: 'acme/web',
      auth: { token: GH, headers: [`Bearer ${JWT}`, 'text/plain'] },
      aws_secret_access_key: AWS_SECRET,
      [GH]: 1,
      retries: 3,
      dryRun: false,
      nothing: null,
    };
    expect(maskSecrets(args)).toEqual({
      repo: 'acme/web',
      auth: { token: '[secret: GitHub token]', headers: ['Bearer [secret: JWT]', 'text/plain'] },
      aws_secret_access_key: '[secret: AWS secret access key]',
      [GH]: 1,
      retries: 3,
      dryRun: false,
      nothing: null,
    });
    expect(args.auth.token).toBe(GH); // the input is not changed
  });

  it('keeps a __proto__ key as an own property', () => {
    const masked = maskSecrets(JSON.parse(`{"__proto__": {"t": "${GH}"}}`)) as object;
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(JSON.stringify(masked)).toBe('{"__proto__":{"t":"[secret: GitHub token]"}}');
  });

  it('fails closed past the inspection limits', () => {
    const limits = {
      maxDepth: 2,
      maxNodes: 100,
      maxStrings: 3,
      maxStringBytes: 20,
      maxTotalBytes: 1000,
      maxCandidates: 10,
    };
    expect(maskSecrets({ a: { b: { c: GH } } }, limits)).toEqual({
      a: { b: '[not inspected: maxDepth]' },
    });
    expect(maskSecrets({ long: 'x'.repeat(21), short: 'ok' }, limits)).toEqual({
      long: '[not inspected: maxStringBytes]',
      short: 'ok',
    });
    expect(maskSecrets(['a', 'b', 'c', 'd', 'e'], limits)).toEqual([
      'a',
      'b',
      'c',
      '[not inspected: maxStrings]',
      '[not inspected: maxStrings]',
    ]);
  });
});

describe('scanSecretSpans agrees with findSecret', () => {
  it.each([
    GH,
    `x ${AWS_ID}`,
    JWT,
    PEM,
    RANDOM,
    `AccountKey=${AZURE_KEY}`,
    'an ordinary sentence with nothing secret',
    JSON.stringify({ type: 'service_account', private_key: '…', client_email: 'x' }),
  ])('%s', (text) => {
    const first = findSecret(text, undefined);
    const details: string[] = [];
    scanSecretSpans(text, undefined, (_start, _end, finding) => details.push(finding.detail));
    if (first === null) expect(details).toEqual([]);
    else expect(details).toContain(first.detail);
  });
});
