// docs/audit.md documents exactly the codes the verifier can report and the actions the gateway
// writes.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { AUDIT_ACTIONS, AUDIT_ISSUE_CODES } from '../../../shared/audit/index.js';

const docs = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8');

it('lists every verify code in the docs table, and no other', () => {
  const documented = [...docs.matchAll(/^\| `(AUDIT_[A-Z_]+)`/gm)].map((match) => match[1]);
  expect(documented.sort()).toEqual(Object.keys(AUDIT_ISSUE_CODES).sort());
});

it('lists every audit action in the docs table, and no other', () => {
  const documented = [...docs.matchAll(/^\| `([a-z_]+\.[a-z_]+)`/gm)].map((match) => match[1]);
  expect(documented.sort()).toEqual(Object.values(AUDIT_ACTIONS).sort());
});
