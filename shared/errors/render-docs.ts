// Renders docs/errors.md from the registry, so the document cannot drift from the code: a test
// compares the committed file with this output (UPDATE_DOCS=1 rewrites it).
import { ERROR_CODES, type ErrorCodeInfo } from './codes.js';

export function renderErrorDocs(): string {
  const rows = (Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][]).map(
    ([code, info]) =>
      `| \`${code}\` | ${info.status ?? 'CLI only'} | ${escapePipes(info.summary)} | \`${escapePipes(info.message)}\` | ${escapePipes(hintsOf(info))} |`,
  );
  return [
    '# Error and reason codes',
    '',
    'Every code the gateway answers or prints, with its HTTP status, its message and what to do.',
    'HTTP answers carry the code in `reasonCode` (and `error` for answers that are not decisions)',
    'and the message in `message`; the CLI prints `CODE: message (hint: …)` on one line. Each code',
    'has one message template; `{name}` stands for a value filled in when the error is built.',
    'A validation refusal (`REQUEST_INVALID`, and the inspect answer `MCP_MALFORMED_RPC`) lists every',
    'problem in `issues`, one `{ field, message }` each: the field by its path in the request',
    '(`persona.tone`, `allowed_tools.3`; `(body)` for the body itself), the message in plain words',
    '(`is required`, `must be an integer between 60 and 2592000`). Every error of a REST route names',
    'the documentation page of the request in `docs` (`docs/agentiam.md#issue-a-credential`).',
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

/** The general hint, then each subject's own (`For an unknown agent: …`). */
function hintsOf(info: ErrorCodeInfo): string {
  const subjects = Object.entries(info.hints ?? {}).map(
    ([subject, hint]) => `<br>For an unknown ${subject}: ${hint}`,
  );
  return info.hint + subjects.join('');
}

function escapePipes(text: string): string {
  return text.replaceAll('|', '\\|');
}
