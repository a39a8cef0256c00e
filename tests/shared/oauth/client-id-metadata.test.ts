// What the authorization server checks of a client ID metadata document, pure
// (shared/oauth/client-id-metadata.ts): the URL, the document against its URL, and how long a
// fetched document may be kept; and that no input makes the document check throw or pass a
// document that is not for its URL.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkClientIdUrl,
  checkMetadataDocument,
  freshnessMs,
  isMetadataDocumentClientId,
  MAX_METADATA_DOCUMENT_AGE_MS,
} from '../../../shared/oauth/client-id-metadata.js';
import { propertyRuns } from '../../support/property-runs.js';

const URL_TEXT = 'https://app.example.com/oauth/client.json';
const GOOD = {
  client_id: URL_TEXT,
  client_name: 'Example',
  redirect_uris: ['https://app.example.com/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
};

describe('the client_id URL', () => {
  it('tells a URL client_id from a registered one', () => {
    expect(isMetadataDocumentClientId(URL_TEXT)).toBe(true);
    expect(isMetadataDocumentClientId('http://app.example.com/c.json')).toBe(true);
    expect(isMetadataDocumentClientId('agc_abcdefghijklmnopqrstuv')).toBe(false);
  });

  it.each([
    [URL_TEXT, undefined],
    ['https://app.example.com/c.json?v=2', undefined],
    ['http://app.example.com/c.json', 'CIMD_NOT_HTTPS'],
    ['https://app.example.com', 'CIMD_URL_INVALID'],
    ['https://app.example.com/', 'CIMD_URL_INVALID'],
    ['https://app.example.com/c.json#x', 'CIMD_URL_INVALID'],
    ['https://user:pw@app.example.com/c.json', 'CIMD_URL_INVALID'],
    ['https://app.example.com/a/../c.json', 'CIMD_URL_INVALID'],
    ['https://app.example.com/./c.json', 'CIMD_URL_INVALID'],
    ['https://', 'CIMD_URL_INVALID'],
  ])('%s → %s', (text, code) => {
    const checked = checkClientIdUrl(text);
    if (code === undefined) expect(checked.ok).toBe(true);
    else expect(checked).toMatchObject({ ok: false, code });
  });
});

describe('the document', () => {
  it('accepts a document for its URL', () => {
    expect(checkMetadataDocument(GOOD, URL_TEXT)).toEqual({
      ok: true,
      document: {
        clientId: URL_TEXT,
        clientName: 'Example',
        redirectUris: ['https://app.example.com/callback'],
        authMethod: 'none',
      },
    });
    const keyed = { ...GOOD, token_endpoint_auth_method: 'private_key_jwt' };
    const withUri = checkMetadataDocument(
      { ...keyed, jwks_uri: 'https://app.example.com/jwks.json' },
      URL_TEXT,
    );
    expect(withUri).toMatchObject({
      ok: true,
      document: { authMethod: 'private_key_jwt', jwksUri: 'https://app.example.com/jwks.json' },
    });
    const inline = { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] };
    expect(checkMetadataDocument({ ...keyed, jwks: inline }, URL_TEXT)).toMatchObject({
      ok: true,
      document: { authMethod: 'private_key_jwt', jwks: inline },
    });
  });

  it.each([
    ['not an object', [], 'not a JSON object'],
    ['another client_id', { ...GOOD, client_id: `${URL_TEXT}x` }, 'client_id'],
    ['a client secret', { ...GOOD, client_secret: 's' }, 'client_secret'],
    [
      'private_key_jwt without keys',
      { ...GOOD, token_endpoint_auth_method: 'private_key_jwt' },
      'jwks_uri',
    ],
    [
      'client_secret_basic',
      { ...GOOD, token_endpoint_auth_method: 'client_secret_basic' },
      'private_key_jwt',
    ],
    [
      'a jwks_uri over http',
      { ...GOOD, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://a.example/j' },
      'https',
    ],
    [
      'both jwks and jwks_uri',
      { ...GOOD, jwks_uri: 'https://a.example/j', jwks: { keys: [{}] } },
      'both',
    ],
    ['client_credentials only', { ...GOOD, grant_types: ['client_credentials'] }, 'grant_types'],
    ['no redirect_uris', { ...GOOD, redirect_uris: [] }, 'redirect_uris'],
    ['a relative redirect_uri', { ...GOOD, redirect_uris: ['/cb'] }, 'redirect_uris'],
    ['a client_name that is not text', { ...GOOD, client_name: 7 }, 'client_name'],
  ])('refuses %s', (_case, document, names) => {
    const checked = checkMetadataDocument(document, URL_TEXT);
    expect(checked.ok).toBe(false);
    expect((checked as { problem: string }).problem).toContain(names);
  });

  it('never throws, and never passes a document that is not for its URL', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.record({
            client_id: fc.oneof(fc.constant(URL_TEXT), fc.string()),
            redirect_uris: fc.array(fc.oneof(fc.webUrl(), fc.string()), { maxLength: 3 }),
            token_endpoint_auth_method: fc.option(fc.string(), { nil: undefined }),
          }),
        ),
        (document) => {
          const checked = checkMetadataDocument(document, URL_TEXT);
          if (checked.ok) {
            expect((document as { client_id: unknown }).client_id).toBe(URL_TEXT);
            expect(checked.document.redirectUris.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe('how long a document is kept', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  it('follows max-age, then Expires, at most 24 hours; not without them', () => {
    expect(freshnessMs({ cacheControl: 'public, max-age=600' }, now)).toBe(600_000);
    expect(freshnessMs({ cacheControl: 'max-age=604800' }, now)).toBe(MAX_METADATA_DOCUMENT_AGE_MS);
    expect(freshnessMs({ cacheControl: 'no-store, max-age=600' }, now)).toBe(0);
    expect(freshnessMs({ cacheControl: 'no-cache' }, now)).toBe(0);
    expect(
      freshnessMs(
        { expires: 'Sat, 28 Nov 2026 13:00:00 GMT', date: 'Sat, 28 Nov 2026 12:00:00 GMT' },
        now,
      ),
    ).toBe(3_600_000);
    expect(freshnessMs({ expires: 'yesterday' }, now)).toBe(0);
    expect(freshnessMs({}, now)).toBe(0);
  });
});
