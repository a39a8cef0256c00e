// Renders client/src/reason-codes.ts from the gateway's error registry (shared/errors/codes.ts).
// The client package compiles on its own (rootDir src) and cannot import shared/, so the list of
// codes is generated into it and committed; tests/client/reason-codes.test.ts compares the
// committed file with this output, and `npm run client:codes` (write-reason-codes.ts) rewrites it.
// Not part of the package: tools/ is outside the build's src/ and the published `files`.
import { ERROR_CODES } from '../../shared/errors/codes.js';

export const REASON_CODES_FILE = new URL('../src/reason-codes.ts', import.meta.url);
export const REASON_CODES_COMMAND = 'npm run client:codes';

/**
 * The codes a client can receive: the registry's codes with an HTTP status, in registry order.
 * Codes with status null are reported by the CLI only and never reach an HTTP answer.
 */
export function clientReasonCodes(): string[] {
  return Object.entries(ERROR_CODES)
    .filter(([, info]) => info.status !== null)
    .map(([code]) => code);
}

export function renderReasonCodes(): string {
  return [
    `// Generated from the gateway's error registry (shared/errors/codes.ts) by \`${REASON_CODES_COMMAND}\``,
    '// (client/tools/write-reason-codes.ts): do not edit. tests/client/reason-codes.test.ts fails while',
    '// this file differs from what the registry generates.',
    '//',
    "// The codes are the registry's codes that reach an HTTP answer, as of this client's release.",
    '// `GatewayDenied.reasonCode` is typed `ReasonCode | (string & {})`, not `ReasonCode`: an older',
    '// client talking to a newer gateway receives codes it does not list, and passes them on as',
    '// sent. Editors still complete the known codes and comparisons with them narrow; a `switch`',
    '// over `reasonCode` needs a `default` branch for the codes that come later.',
    '',
    '/** Every reasonCode the gateway answers over HTTP, as of this client. */',
    'export const REASON_CODES = [',
    ...clientReasonCodes().map((code) => `  '${code}',`),
    '] as const;',
    '',
    '/** A reasonCode this client knows; a newer gateway may answer others. */',
    'export type ReasonCode = (typeof REASON_CODES)[number];',
    '',
  ].join('\n');
}
