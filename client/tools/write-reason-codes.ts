// `npm run client:codes`: rewrites client/src/reason-codes.ts from the gateway's error registry
// (render-reason-codes.ts). Run it after adding or removing a code in shared/errors/codes.ts.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clientReasonCodes, REASON_CODES_FILE, renderReasonCodes } from './render-reason-codes.js';

writeFileSync(REASON_CODES_FILE, renderReasonCodes());
console.log(`wrote ${clientReasonCodes().length} codes to ${fileURLToPath(REASON_CODES_FILE)}`);
