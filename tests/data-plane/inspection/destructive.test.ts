import { describe, expect, it } from 'vitest';
import {
  compileDestructiveDetector,
  DEFAULT_DESTRUCTIVE_TOOL_PATTERNS,
  type ToolCallView,
} from '../../../data-plane/inspection/index.js';

const detect = compileDestructiveDetector({ toolPatterns: DEFAULT_DESTRUCTIVE_TOOL_PATTERNS });
const dropTruncateOnly = compileDestructiveDetector({ toolPatterns: ['drop', 'truncate'] });

function call(args: unknown, toolName = 'run', annotations?: ToolCallView['annotations']) {
  return { method: 'tools/call', toolName, args, annotations };
}

type Row = [name: string, args: unknown, kind: string | null, detail?: string];

/** SQL under `query`; each row: the statement, the kind expected (null: not destructive). */
const SQL_ROWS: [sql: string, kind: string | null, detail?: string][] = [
  ['SELECT * FROM users WHERE id = 1', null],
  ['SELECT name FROM users', null],
  ['DELETE FROM users', 'sql', 'DELETE without WHERE'],
  ['delete from users;', 'sql', 'DELETE without WHERE'],
  ['DELETE FROM users WHERE id = 1', null],
  ['DELETE FROM public.users AS u WHERE u.id = $1 RETURNING *', null],
  ['DELETE FROM users WHERE 1=1', 'sql', 'DELETE with an always-true WHERE'],
  ["DELETE FROM users WHERE id = 7 OR 'a' = 'a'", 'sql', 'DELETE with an always-true WHERE'],
  ['DELETE FROM t USING (SELECT id FROM u WHERE u.x > 1) s', 'sql', 'DELETE without WHERE'],
  ['DELETE FROM t USING u WHERE t.id = u.id', null],
  ['UPDATE t SET a=1', 'sql', 'UPDATE without WHERE'],
  ['UPDATE t SET a=1 WHERE id=2', null],
  ['UPDATE t SET a = (SELECT max(b) FROM c WHERE c.id = 3)', 'sql', 'UPDATE without WHERE'],
  ['UPDATE t SET a = 1 FROM u WHERE t.id = u.id', null],
  ['DROP TABLE users', 'sql', 'DROP TABLE'],
  ['drop table if exists "Users" cascade', 'sql', 'DROP TABLE'],
  ['DROP DATABASE prod;', 'sql', 'DROP DATABASE'],
  ['DROP MATERIALIZED VIEW mv', 'sql', 'DROP MATERIALIZED VIEW'],
  ['TRUNCATE users', 'sql', 'TRUNCATE'],
  ['TRUNCATE TABLE a, b RESTART IDENTITY', 'sql', 'TRUNCATE'],
  ['ALTER TABLE t DROP COLUMN c', 'sql', 'ALTER TABLE … DROP COLUMN'],
  ['ALTER TABLE t DROP CONSTRAINT fk_x', 'sql', 'ALTER TABLE … DROP CONSTRAINT'],
  ['ALTER TABLE t ADD COLUMN c int', null],
  ['ALTER TABLE t ALTER COLUMN c DROP NOT NULL', null],
  ['ALTER TABLE t ALTER COLUMN c DROP DEFAULT', null],
  ["SELECT 'DROP TABLE x'", null],
  ['SELECT "drop table x" FROM y', null],
  ['-- DROP TABLE x\nSELECT 1', null],
  ['/* DELETE FROM users */ SELECT 1', null],
  ['SELECT $body$ DROP TABLE x $body$', null],
  ['SELECT 1; DROP TABLE x', 'sql', 'DROP TABLE'],
  ["SELECT 'a;b'; DELETE FROM t WHERE id = 1", null],
  ['INSERT INTO t (a) VALUES (1)', null],
  ['INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET a = 1', null],
  ['CREATE TABLE t (id int REFERENCES u ON DELETE CASCADE)', null],
  ['SELECT * FROM t FOR UPDATE', null],
  [
    'WITH gone AS (DELETE FROM t RETURNING *) SELECT count(*) FROM gone',
    'sql',
    'DELETE without WHERE',
  ],
  [
    'WITH old AS (SELECT id FROM t WHERE at < now()) DELETE FROM t WHERE id IN (SELECT id FROM old)',
    null,
  ],
  ['WITH old AS (SELECT id FROM t WHERE x) DELETE FROM t', 'sql', 'DELETE without WHERE'],
  ['EXPLAIN ANALYZE DELETE FROM t', 'sql', 'DELETE without WHERE'],
  ['BEGIN; DELETE FROM t; COMMIT;', 'sql', 'DELETE without WHERE'],
  ['DO $$ BEGIN DELETE FROM audit; END $$', 'sql', 'DELETE without WHERE'],
  ["EXEC('DROP TABLE users')", 'sql', 'DROP TABLE'],
  ["SELECT 'it\\'s'; DROP TABLE x; -- '", 'sql', 'DROP TABLE'],
  ['please drop me a line', null],
  ['Remember to delete from the list', null],
  ['Update your profile settings', null],
  ['Update the doc set to draft', null],
  ['truncate the text to 100 characters', null],
  ['We will alter the plan and drop the rest', null],
];

const ROWS: Row[] = [
  ...SQL_ROWS.map(([sql, kind, detail]): Row => [`sql: ${sql}`, { query: sql }, kind, detail]),
  // shell
  ['rm -rf /tmp/x', { command: 'rm -rf /tmp/x' }, 'shell', 'rm -rf'],
  ['rm -fr in a script', { script: 'cd /srv && rm -fr build' }, 'shell', 'rm -rf'],
  ['rm -r -f', { cmd: 'rm -r -f ./data' }, 'shell', 'rm -rf'],
  ['rm --recursive --force', { cmd: 'rm --recursive --force x' }, 'shell', 'rm -rf'],
  ['rm -r /', { command: 'rm -r /' }, 'shell', 'rm -r on a root or home directory'],
  ['rm -r ~', { command: 'rm -r ~' }, 'shell', 'rm -r on a root or home directory'],
  ['rm *', { command: 'rm *' }, 'shell', 'rm of everything (*)'],
  ['rm notes.txt (plain rm is allowed)', { command: 'rm notes.txt' }, null],
  ['rm -f build.log', { command: 'rm -f build.log' }, null],
  ['rm -r tmpdir (not forced, not root)', { command: 'rm -r tmpdir' }, null],
  ['sudo rm -rf', { command: 'sudo -u root rm -rf /var/lib/x' }, 'shell', 'rm -rf'],
  ['ls -la', { command: 'ls -la' }, null],
  ['echo rm -rf (an argument, not a command)', { command: 'echo "rm -rf /"' }, null],
  ['prose mentioning rm -rf', { note: 'I ran rm -rf on it yesterday' }, null],
  ['after &&', { command: 'make clean && rm -rf dist' }, 'shell', 'rm -rf'],
  ['in $( )', { command: 'echo $(rm -rf /data)' }, 'shell', 'rm -rf'],
  ['in backticks inside quotes', { command: 'echo "`rm -rf /data`"' }, 'shell', 'rm -rf'],
  ['bash -c', { command: "bash -c 'rm -rf /data'" }, 'shell', 'rm -rf'],
  ['ssh host cmd', { command: 'ssh -p 22 host rm -rf /srv' }, 'shell', 'rm -rf'],
  ['dd of=', { command: 'dd if=/dev/zero of=/dev/sda bs=1M' }, 'shell', 'dd of='],
  ['mkfs.ext4', { command: 'mkfs.ext4 /dev/sdb1' }, 'shell', 'mkfs'],
  ['shred', { command: 'shred -u secrets.txt' }, 'shell', 'shred'],
  ['wipefs', { command: 'wipefs -a /dev/sdb' }, 'shell', 'wipefs'],
  ['fdisk writes', { command: 'fdisk /dev/sda' }, 'shell', 'fdisk'],
  ['fdisk -l lists', { command: 'fdisk -l' }, null],
  ['fork bomb', { command: ':(){ :|:& };:' }, 'shell', 'fork bomb'],
  ['chmod -R 777 /', { command: 'chmod -R 777 /' }, 'shell', 'chmod -R on a root directory'],
  ['chmod 644 file', { command: 'chmod 644 notes.txt' }, null],
  ['> /dev/sda', { command: 'cat image.bin > /dev/sda' }, 'shell', 'write to a block device'],
  ['> /dev/null', { command: 'make 2> /dev/null' }, null],
  ['shutdown -h now', { command: 'shutdown -h now' }, 'shell', 'shutdown'],
  ['bare reboot under command', { command: 'reboot' }, 'shell', 'reboot'],
  ['bare reboot in prose field', { status: 'reboot' }, null],
  ['kill -9 1', { command: 'kill -9 1' }, 'shell', 'kill 1'],
  ['kill 1234', { command: 'kill 1234' }, null],
  ['git push --force', { command: 'git push --force origin main' }, 'shell', 'git push --force'],
  ['git push', { command: 'git push origin main' }, null],
  ['git reset --hard', { command: 'git reset --hard HEAD~3' }, 'shell', 'git reset --hard'],
  ['git status', { command: 'git status' }, null],
  ['find -delete', { command: 'find . -name "*.tmp" -delete' }, 'shell', 'find -delete'],
  ['find -exec rm -rf', { command: 'find /srv -exec rm -rf {} +' }, 'shell', 'rm -rf'],
  [
    'wrapped: timeout, env, xargs',
    { command: 'timeout 5 env A=1 xargs rm -rf' },
    'shell',
    'rm -rf',
  ],
  ['kubectl delete', { command: 'kubectl delete ns prod' }, 'shell', 'kubectl delete'],
  ['kubectl get', { command: 'kubectl get pods' }, null],
  [
    'terraform destroy',
    { command: 'terraform destroy -auto-approve' },
    'shell',
    'terraform destroy',
  ],
  ['psql -c DROP', { command: 'psql -c "DROP TABLE users"' }, 'sql', 'DROP TABLE'],
  ['argv form', { argv: ['rm', '-rf', '/'] }, 'shell', 'rm -rf'],
  ['argv form, harmless', { argv: ['ls', '-la', '/'] }, null],
  ['command + args', { command: 'rm', args: ['-rf', '/srv'] }, 'shell', 'rm -rf'],
  [
    'PowerShell',
    { command: 'Remove-Item -Recurse -Force C:\\data' },
    'shell',
    'remove-item recurse force',
  ],
  // HTTP
  ['method: DELETE', { method: 'DELETE', url: 'https://api.x.io/u/1' }, 'http-method', 'DELETE'],
  ['httpMethod: delete', { httpMethod: ' delete ' }, 'http-method', 'DELETE'],
  ['method: GET', { method: 'GET', url: 'https://api.x.io/u/1' }, null],
  ['method: PURGE (cache, not data)', { method: 'PURGE' }, null],
  [
    'curl -X DELETE',
    { command: 'curl -X DELETE https://api/x/1' },
    'http-method',
    'curl -X DELETE',
  ],
  // nested
  ['deep in arrays', { steps: [{ sql: 'SELECT 1' }, { sql: 'TRUNCATE logs' }] }, 'sql', 'TRUNCATE'],
  ['no arguments', undefined, null],
  ['numbers and booleans', { a: 1, b: true, c: null }, null],
];

describe('destructive detector: arguments', () => {
  it.each(ROWS)('%s', (_name, args, kind, detail) => {
    const signal = detect(call(args));
    if (kind === null) {
      expect(signal).toBeNull();
    } else {
      expect(signal?.kind).toBe(kind);
      if (detail !== undefined) expect(signal?.detail).toBe(detail);
    }
  });

  it('names the argument path', () => {
    expect(detect(call({ query: 'DROP TABLE x' }))).toEqual({
      kind: 'sql',
      detail: 'DROP TABLE',
      path: 'arguments.query',
    });
    expect(detect(call({ steps: [{ 'the sql': 'TRUNCATE t' }] }))?.path).toBe(
      'arguments.steps[0]["the sql"]',
    );
  });
});

describe('destructive detector: tool names', () => {
  const names: [tool: string, defaults: boolean, dropTruncate: boolean][] = [
    ['delete_draft', true, false],
    ['drop_table', true, true],
    ['dropdown_select', false, false],
    ['truncateLogs', true, true],
    ['bulkDelete', true, false],
    ['purge-cache', true, false],
    ['files.remove', true, false],
    ['format_date', false, false],
    ['quick_format_disk', true, false],
    ['undelete_item', false, false],
    ['skill_search', false, false],
    ['list_deleted_items', false, false],
    ['KillProcess', true, false],
    ['get_user', false, false],
    ['db/drop2', true, true],
  ];
  it.each(names)('%s: default list %s, drop/truncate only %s', (tool, defaults, dt) => {
    expect(detect(call({}, tool))?.kind ?? null).toBe(defaults ? 'tool-name' : null);
    expect(dropTruncateOnly(call({}, tool))?.kind ?? null).toBe(dt ? 'tool-name' : null);
  });

  it('names the pattern that matched', () => {
    expect(detect(call({}, 'delete_draft'))).toEqual({
      kind: 'tool-name',
      detail: 'matches "delete"',
    });
  });

  it('supports globs and multi-word patterns', () => {
    const custom = compileDestructiveDetector({ toolPatterns: ['drop*', 'force_push'] });
    expect(custom(call({}, 'dropdown_select'))?.kind).toBe('tool-name');
    expect(custom(call({}, 'git_force_push'))?.kind).toBe('tool-name');
    expect(custom(call({}, 'force_update'))).toBeNull();
  });

  it('an HTTP tool with delete in its name is an HTTP DELETE even when delete is not configured', () => {
    expect(dropTruncateOnly(call({}, 'http_delete'))).toEqual({
      kind: 'http-method',
      detail: 'DELETE (tool name)',
    });
  });
});

describe('destructive detector: annotations', () => {
  it('fires on an explicit destructiveHint: true only', () => {
    expect(detect(call({}, 'act', { destructiveHint: true }))?.kind).toBe('annotation');
    expect(detect(call({}, 'act', { destructiveHint: true, readOnlyHint: true }))?.kind).toBe(
      'annotation',
    );
    expect(detect(call({}, 'act', {}))).toBeNull();
    expect(detect(call({}, 'act', { readOnlyHint: false }))).toBeNull();
  });

  it('a destructiveHint: false or readOnlyHint: true does not clear other signals', () => {
    const hints = { destructiveHint: false, readOnlyHint: true };
    expect(detect(call({}, 'drop_table', hints))?.kind).toBe('tool-name');
    expect(detect(call({ q: 'DROP TABLE x' }, 'query', hints))?.kind).toBe('sql');
  });
});
