// The client's reason codes are the gateway's: client/src/reason-codes.ts is exactly what the
// error registry generates (the package cannot import shared/, so the list is committed), every
// listed code is one the gateway answers over HTTP, and GatewayDenied passes a code this client
// does not know (one a newer gateway added) on as sent. Pure: regenerates in memory, reads one file.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { GatewayDenied, REASON_CODES, type ReasonCode } from '../../client/src/index.js';
import {
  REASON_CODES_COMMAND,
  REASON_CODES_FILE,
  renderReasonCodes,
} from '../../client/tools/render-reason-codes.js';
import { ERROR_CODES } from '../../shared/errors/codes.js';

describe('client reason codes', () => {
  it('client/src/reason-codes.ts is what the error registry generates', () => {
    expect(
      readFileSync(REASON_CODES_FILE, 'utf8'),
      `client/src/reason-codes.ts is stale: run ${REASON_CODES_COMMAND}`,
    ).toBe(renderReasonCodes());
  });

  it('lists every registry code with an HTTP status, and only those', () => {
    const http = Object.entries(ERROR_CODES)
      .filter(([, info]) => info.status !== null)
      .map(([code]) => code);
    expect([...REASON_CODES]).toEqual(http);
    expect(REASON_CODES).toContain('NPL_POLICY_BLOCK');
    expect(REASON_CODES).not.toContain('STORAGE_UNREACHABLE');
  });

  it('GatewayDenied.reasonCode is the code union, open to codes a newer gateway sends', () => {
    expectTypeOf<GatewayDenied['reasonCode']>().toEqualTypeOf<ReasonCode | (string & {})>();
    const known = new GatewayDenied({ reasonCode: 'NPL_POLICY_BLOCK', inspectionId: 'i-1' });
    const future = new GatewayDenied({ reasonCode: 'SOME_LATER_CODE', inspectionId: 'i-2' });
    expect([known.reasonCode, future.reasonCode]).toEqual(['NPL_POLICY_BLOCK', 'SOME_LATER_CODE']);
    expect(future.message).toBe('the gateway denied the call: SOME_LATER_CODE');
  });
});
