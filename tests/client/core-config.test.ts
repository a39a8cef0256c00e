// Configuration is validated up front: each wrong option is a GatewayConfigError naming it,
// thrown by createGatewayClient before any request.
import { describe, expect, it } from 'vitest';
import {
  createGatewayClient,
  type GatewayClientConfig,
  GatewayConfigError,
  GatewayError,
} from '../../client/src/index.js';

const valid: GatewayClientConfig = {
  tenantId: 't-1',
  agentId: 'a-1',
  apiKey: 'agk_test',
  baseUrl: 'http://localhost:8080/',
  policy: 'svc://payments-guard@1.2.3',
};
const JWK = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: '9pKMYjW_t4fuY0XiFw9VF_eRZ65ulXgQFzx9rf9Qj6M',
  d: 'ulR-v6IJxmjzg8uothxyWiWNNbaEdp5EyB_EqQY3coc',
};

function refusal(patch: Record<string, unknown>): GatewayConfigError {
  try {
    createGatewayClient({ ...valid, ...patch } as GatewayClientConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayConfigError;
  }
  throw new Error(`accepted ${JSON.stringify(patch)}`);
}

describe('createGatewayClient configuration', () => {
  it('accepts a complete configuration and normalizes the base URL', () => {
    const client = createGatewayClient({ ...valid, privateKeyJwk: JWK });
    expect(client.config.policy).toBe('svc://payments-guard@1.2.3');
    expect(client.revoked).toBe(false);
  });

  it.each([
    ['svc://p@latest', 'policy'],
    ['svc://p@^1.0.0', 'policy'],
    ['svc://p@~1.0.0', 'policy'],
    ['svc://p@1.0', 'policy'],
    ['svc://p', 'policy'],
    ['p@1.0.0', 'policy'],
    ['', 'policy'],
    [undefined, 'policy'],
  ])('refuses policy %j (unpinned or malformed)', (policy, field) => {
    const error = refusal({ policy });
    expect(error.field).toBe(field);
    expect(error.code).toBe('GATEWAY_CONFIG_INVALID');
  });

  it.each([
    ['not a url'],
    ['ftp://gateway.example.com'],
    ['http://gateway.example.com/?x=1'],
    ['http://user:pw@gateway.example.com'],
    [''],
    [undefined],
  ])('refuses baseUrl %j', (baseUrl) => {
    expect(refusal({ baseUrl }).field).toBe('baseUrl');
  });

  it.each([['apiKey'], ['tenantId'], ['agentId']])('refuses a missing %s', (field) => {
    expect(refusal({ [field]: undefined }).field).toBe(field);
    expect(refusal({ [field]: '  ' }).field).toBe(field);
  });

  it('refuses an unknown execution mode', () => {
    expect(refusal({ executionMode: 'dry-run' }).field).toBe('executionMode');
  });

  it.each([
    [{ kty: 'RSA', n: 'x', e: 'AQAB' }, 'privateKeyJwk'],
    [{ kty: 'OKP', crv: 'X25519', x: JWK.x, d: JWK.d }, 'privateKeyJwk'],
    [{ kty: 'OKP', crv: 'Ed25519', x: JWK.x }, 'privateKeyJwk.d'],
    [{ kty: 'OKP', crv: 'Ed25519', x: 'short', d: JWK.d }, 'privateKeyJwk.x'],
  ])('refuses privateKeyJwk %j', (privateKeyJwk, field) => {
    expect(refusal({ privateKeyJwk }).field).toBe(field);
  });

  it('refuses bad numbers and servers', () => {
    expect(refusal({ timeoutMs: 0 }).field).toBe('timeoutMs');
    expect(refusal({ approvalTimeoutMs: -1 }).field).toBe('approvalTimeoutMs');
    expect(refusal({ retries: 1.5 }).field).toBe('retries');
    expect(refusal({ servers: { echo: '' } }).field).toBe('servers.echo');
    expect(refusal({ publicUrl: 'nope' }).field).toBe('publicUrl');
  });

  it('a delegation needs a private key', () => {
    expect(refusal({ delegation: { rootCredential: {}, chain: [] } }).field).toBe('privateKeyJwk');
  });
});
