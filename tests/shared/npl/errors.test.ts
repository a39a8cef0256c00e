import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NPL_ERROR_CODES, NPL_ISSUE_CODES } from '../../../shared/npl/index.js';

const docs = readFileSync(new URL('../../../docs/npl.md', import.meta.url), 'utf8');

function documentedCodes(table: string): Map<string, string> {
  const section = docs.slice(docs.indexOf(`| ${table} | Meaning |`));
  const rows = section.split('\n\n')[0]!.split('\n').slice(2);
  return new Map(
    rows.map((row) => {
      const [code, meaning] = row.replace(/^\| /, '').replace(/ \|$/, '').split(' | ');
      return [code!.replaceAll('`', ''), meaning!];
    }),
  );
}

describe('the error code registry and docs/npl.md agree', () => {
  it('documents every error code with its message, and no other', () => {
    expect(Object.fromEntries(documentedCodes('Error code'))).toEqual(NPL_ERROR_CODES);
  });

  it('documents every issue code with its message, and no other', () => {
    expect(Object.fromEntries(documentedCodes('Issue code'))).toEqual(NPL_ISSUE_CODES);
  });
});
