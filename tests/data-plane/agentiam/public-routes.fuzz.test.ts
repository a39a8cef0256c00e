// The public AgentIAM routes take whatever a stranger sends in the path and in Accept and
// If-None-Match: generated DIDs, file names and list ids (valid-looking, hostile, raw
// percent-encoded bytes, overlong) never make a 5xx other than the resolver's 501 for another DID
// method, every answer is bounded, and every JSON answer parses.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKeyedAgent, issueCredential } from '../../support/agentiam-client.js';
import { startTestGateway, type TestGateway } from '../../support/gateway.js';
import { hostileUriComponent } from '../../support/hostile-uri.js';
import { propertyRuns } from '../../support/property-runs.js';
import { quickDatabaseKind } from '../inspect/support.js';

const unit = fc.constantFrom(
  'a',
  'Z',
  '0',
  ':',
  '.',
  '-',
  '_',
  '%',
  '/',
  '#',
  '?',
  ' ',
  '\u0000',
  '\ud800',
  '€',
  '\ud83d\ude00',
  'did:',
  'svc:',
  'key:z6Mk',
);
const text = fc.oneof(
  fc.string({ unit, maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 90, maxLength: 300 }),
);

describe('AgentIAM public routes under generated input', () => {
  let gateway: TestGateway;
  let validSegments: string[];

  beforeAll(async () => {
    gateway = await startTestGateway(quickDatabaseKind);
    const agent = await addKeyedAgent(gateway, gateway.tenant.id);
    const credential = await issueCredential(gateway, agent);
    const listUrl = (credential.credentialStatus as { statusListCredential: string })
      .statusListCredential;
    validSegments = [
      `did:svc:${gateway.tenant.id}`,
      `did:key:${agent.key.publicKeyMultibase}`,
      'agentiam-v1.jsonld',
      listUrl.slice(listUrl.lastIndexOf('/') + 1),
    ];
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('never answers 500, whatever the path, Accept and If-None-Match', async () => {
    const segment = fc.oneof(
      text.map(hostileUriComponent),
      fc.constantFrom(...validSegments).map(hostileUriComponent),
      fc
        .tuple(fc.constantFrom(...validSegments), text)
        .map(([valid, tail]) => hostileUriComponent(valid + tail)),
      fc.constantFrom('%', '%E0%A4%A', '%FF', '..', '%2e%2e', ''),
    );
    const header = fc.option(
      fc.oneof(
        fc.string({ unit: 'grapheme-ascii', maxLength: 80 }),
        fc.constantFrom(
          'application/did+ld+json;q=abc',
          'application/did+json;q=0',
          '*',
          'W/"x", "y"',
          ',,,;;;',
        ),
      ),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/1.0/identifiers/', '/contexts/', '/api/v1/agentiam/status-lists/'),
        segment,
        header,
        header,
        fc.constantFrom('GET', 'HEAD'),
        async (prefix, value, accept, ifNoneMatch, method) => {
          const headers: Record<string, string> = {};
          if (accept !== undefined) headers.accept = accept;
          if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch;
          const answer = await gateway.runtime.app.inject({
            method,
            url: `${prefix}${value}`,
            headers,
          });
          const allowed =
            prefix === '/1.0/identifiers/' ? [200, 304, 400, 404, 501] : [200, 304, 400, 404];
          expect(allowed, `${method} ${prefix}${value} → ${answer.statusCode}`).toContain(
            answer.statusCode,
          );
          expect(answer.body.length).toBeLessThan(64 * 1024);
          if (method === 'GET' && answer.statusCode !== 304) {
            expect(() => JSON.parse(answer.body)).not.toThrow();
          }
        },
      ),
      { numRuns: propertyRuns(600), seed: 20261125 },
    );
  });
});
