// schema/schema.graphql passes graphql-schema-linter with its default configuration: every rule
// (descriptions on every type, field, argument, input field and enum value, since GraphiQL and
// the console show them; naming, sorting and the relay connection shape). The linter runs from
// an empty directory, so no project configuration can switch a rule off.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCHEMA_FILE } from '../../../control-plane/graphql/print-schema.js';

interface LintError {
  readonly message: string;
  readonly rule: string;
}

const LINTER = createRequire(import.meta.url).resolve('graphql-schema-linter/lib/cli.js');

let emptyDirectory: string;
beforeAll(async () => {
  emptyDirectory = await mkdtemp(join(tmpdir(), 'schema-lint-'));
});
afterAll(() => rm(emptyDirectory, { recursive: true, force: true }));

/** The linter's errors for a schema file, or for SDL given on stdin. */
async function lint(schema: { file: string } | { sdl: string }): Promise<LintError[]> {
  const args = [LINTER, '--format', 'json', '--config-directory', emptyDirectory];
  const running = promisify(execFile)(
    process.execPath,
    'file' in schema ? [...args, schema.file] : [...args, '--stdin'],
  );
  if ('sdl' in schema) running.child.stdin?.end(schema.sdl);
  const stdout = await running.then(
    (result) => result.stdout,
    (error: { stdout?: string }) => {
      // Exit code 1 means "errors found"; the report is still on stdout.
      if (typeof error.stdout === 'string' && error.stdout !== '') return error.stdout;
      throw error;
    },
  );
  return (JSON.parse(stdout) as { errors: LintError[] }).errors;
}

it('the linter reports a schema element without a description (the check can fail)', async () => {
  const errors = await lint({ sdl: '"""Reads."""\ntype Query {\n  ping: String\n}\n' });
  expect(errors.map((error) => error.rule)).toContain('fields-have-descriptions');
});

it('schema/schema.graphql has no graphql-schema-linter error under every default rule', async () => {
  const errors = await lint({ file: SCHEMA_FILE });
  expect(errors.map((error) => `${error.rule}: ${error.message}`)).toEqual([]);
});
