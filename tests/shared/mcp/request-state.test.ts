// The gateway's requestState envelope (shared/mcp/request-state.ts) and the key it is MAC'd with
// (shared/crypto/derived-key.ts): what is sealed opens with the same key, on any process that
// derives it from the same master key; any change to the text, another key, an expired envelope
// or a payload of another shape is refused. Pure: milliseconds.
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DERIVED_KEY_LABELS, deriveKey } from '../../../shared/crypto/derived-key.js';
import {
  isGatewayRequestState,
  MAX_REQUEST_STATE_CHARS,
  openRequestState,
  type RequestState,
  sealRequestState,
} from '../../../shared/mcp/request-state.js';
import { propertyRuns } from '../../support/property-runs.js';

const masterKey = randomBytes(32);
const key = deriveKey(masterKey, DERIVED_KEY_LABELS.MCP_REQUEST_STATE);
const NOW = 1_800_000_000_000;

const approval: RequestState = {
  kind: 'approval',
  tenantId: 't-1',
  agentId: 'a-1',
  serverId: 's-1',
  callDigest: 'digest',
  expiresAt: NOW + 60_000,
  approvalId: 'ap-1',
};
const round: RequestState = {
  kind: 'round',
  tenantId: 't-1',
  agentId: 'a-1',
  serverId: 's-1',
  callDigest: 'digest',
  expiresAt: NOW + 60_000,
  decision: 'allow',
  upstreamState: 'the upstream’s own ✓ state',
};

describe('the derived key', () => {
  it('is the same for the same master key and label, and is not the master key', () => {
    expect(deriveKey(Buffer.from(masterKey), DERIVED_KEY_LABELS.MCP_REQUEST_STATE)).toEqual(key);
    expect(key).toHaveLength(32);
    expect(key.equals(masterKey)).toBe(false);
    expect(deriveKey(randomBytes(32), DERIVED_KEY_LABELS.MCP_REQUEST_STATE).equals(key)).toBe(
      false,
    );
  });

  it('refuses a master key of another length', () => {
    expect(() => deriveKey(randomBytes(16), DERIVED_KEY_LABELS.MCP_REQUEST_STATE)).toThrow(
      RangeError,
    );
  });
});

describe('the requestState envelope', () => {
  it('opens what it sealed, of either kind', () => {
    for (const state of [approval, round]) {
      const text = sealRequestState(key, state);
      expect(isGatewayRequestState(text)).toBe(true);
      expect(text).toMatch(/^ags1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      expect(openRequestState(key, text, NOW)).toEqual({ ok: true, state });
    }
  });

  it('refuses an envelope another key sealed', () => {
    const other = deriveKey(randomBytes(32), DERIVED_KEY_LABELS.MCP_REQUEST_STATE);
    expect(openRequestState(other, sealRequestState(key, approval), NOW)).toEqual({
      ok: false,
      problem: 'forged',
    });
  });

  it('refuses an expired envelope, naming what it was for', () => {
    const text = sealRequestState(key, approval);
    expect(openRequestState(key, text, approval.expiresAt)).toEqual({
      ok: false,
      problem: 'expired',
      state: approval,
    });
  });

  it('refuses a payload of another shape even when its MAC verifies', () => {
    const signed = `ags1.${Buffer.from(JSON.stringify({ ...approval, approvalId: 7 })).toString('base64url')}`;
    const mac = createHmac('sha256', key).update(signed).digest('base64url');
    expect(openRequestState(key, `${signed}.${mac}`, NOW)).toEqual({
      ok: false,
      problem: 'malformed',
    });
    const notJson = `ags1.${Buffer.from('{').toString('base64url')}`;
    const notJsonMac = createHmac('sha256', key).update(notJson).digest('base64url');
    expect(openRequestState(key, `${notJson}.${notJsonMac}`, NOW)).toEqual({
      ok: false,
      problem: 'malformed',
    });
  });

  it('refuses text that is not an envelope, or is too long to be one', () => {
    for (const text of [
      '',
      'ags1.',
      'ags1..',
      'upstream-state',
      `ags1.${'A'.repeat(MAX_REQUEST_STATE_CHARS)}.x`,
    ]) {
      expect(openRequestState(key, text, NOW).ok).toBe(false);
    }
    expect(isGatewayRequestState(42)).toBe(false);
  });

  it('refuses every change to a sealed envelope', () => {
    const text = sealRequestState(key, round);
    fc.assert(
      fc.property(
        fc.nat({ max: text.length - 1 }),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'),
        (at, character) => {
          fc.pre(text[at] !== character);
          const changed = text.slice(0, at) + character + text.slice(at + 1);
          const opened = openRequestState(key, changed, NOW);
          // base64url's last character carries spare bits: a change there may decode the same.
          if (opened.ok)
            expect(Buffer.from(changed.split('.').at(-1)!, 'base64url')).toEqual(
              Buffer.from(text.split('.').at(-1)!, 'base64url'),
            );
          else expect(['forged', 'malformed']).toContain(opened.problem);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});
