// Renders docs/errors.md from the registry, so the document cannot drift from the code: a test
// compares the committed file with this output (UPDATE_DOCS=1 rewrites it).
import { ERROR_CODES, type ErrorCodeInfo } from './codes.js';

export function renderErrorDocs(): string {
  const rows = (Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][]).map(
    ([code, info]) =>
      `| \`${code}\` | ${info.status ?? 'CLI only'} | ${escapePipes(info.summary)} | \`${escapePipes(info.message)}\` | ${escapePipes(info.hint)} |`,
  );
  return [
    '# Error and reason codes',
    '',
    'Every code the gateway answers or prints, with its HTTP status, its message and what to do.',
    'HTTP answers carry the code in `reasonCode` (and `error` for answers that are not decisions)',
    'and the message in `message`; the CLI prints `CODE: message (hint: …)` on one line. Each code',
    'has one message template; `{name}` stands for a value filled in when the error is built.',
    'Generated from `shared/errors/codes.ts`; do not edit by hand',
    '(`UPDATE_DOCS=1 npx vitest run tests/shared/errors` rewrites it).',
    '',
    'NPL document and condition errors (`NplError`) are listed in [npl.md](npl.md); audit',
    'verification codes (`AUDIT_*` issues of `audit verify`) in [audit.md](audit.md).',
    '',
    '| Code | HTTP | Meaning | Message | Hint |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

function escapePipes(text: string): string {
  return text.replaceAll('|', '\\|');
}
