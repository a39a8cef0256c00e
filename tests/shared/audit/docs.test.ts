// docs/audit.md documents exactly the codes the verifier can report.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { AUDIT_ISSUE_CODES } from '../../../shared/audit/index.js';

it('lists every verify code in the docs table, and no other', () => {
  const docs = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8');
  const documented = [...docs.matchAll(/^\| `(AUDIT_[A-Z_]+)`/gm)].map((match) => match[1]);
  expect(documented.sort()).toEqual(Object.keys(AUDIT_ISSUE_CODES).sort());
});
