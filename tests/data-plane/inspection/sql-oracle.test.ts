// The SQL detector against a real SQL parser. node-sql-parser is the oracle: for generated SQL it
// accepts (MySQL, PostgreSQL, T-SQL or SQLite grammar), every statement it classifies as DROP,
// TRUNCATE, DELETE or UPDATE without WHERE must make the detector fire, and SQL in which it finds
// none of them must not. The parser stays out of the gateway (see data-plane/inspection/sql.ts).

import fc from 'fast-check';
import { Parser } from 'node-sql-parser';
import { describe, expect, it } from 'vitest';
import { compileDestructiveDetector } from '../../../data-plane/inspection/index.js';
import { COMMANDS_WITH_RULES } from '../../../data-plane/inspection/shell-commands.js';

const detect = compileDestructiveDetector({ toolPatterns: [] });
const parser = new Parser();
/**
 * Enough to reach every generator branch many times; each property stays within seconds. The same
 * on every Node line (not a share, tests/support/property-runs.ts): the check that the generator
 * keeps reaching the oracle counts on this many samples.
 */
const RUNS = 250;

const DIALECTS = ['mysql', 'postgresql', 'transactsql', 'sqlite'] as const;
type Dialect = (typeof DIALECTS)[number];
const QUOTES: Record<Dialect, readonly [open: string, close: string]> = {
  mysql: ['`', '`'],
  postgresql: ['"', '"'],
  transactsql: ['[', ']'],
  sqlite: ['"', '"'],
};

/** A name part; `quoted` names may hold spaces, keywords and the closing quote itself. */
interface Ident {
  readonly name: string;
  readonly quoted: boolean;
}
/** A keyword or punctuation, or a (qualified) name rendered in the dialect's quoting. */
type Part = string | readonly Ident[];
type Statement = readonly Part[];

const COMMAND_NAMES = new Set(COMMANDS_WITH_RULES);
/**
 * Words an unquoted name cannot be in one of the four grammars (reserved there): `DROP TABLE
 * by.x` is no DROP, and T-SQL's grammar then reads the words as something else (seed
 * -1771600186 read `DROP TABLE bY._ CASCADE` as two variable assignments).
 */
const RESERVED = new Set(
  `add all alter and any as asc between by cascade case check column constraint create cross
  current database default delete desc distinct drop else end escape except exec execute exists
  fetch for foreign from full go group having if in index inner insert intersect into is join key
  left like limit natural not null of offset on or order outer primary procedure references
  right schema select set table then to top truncate union unique update use using values view
  when where with`.split(/\s+/),
);
const plainName = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,9}$/)
  .filter(
    (n) =>
      !COMMAND_NAMES.has(n.toLowerCase()) &&
      !n.toLowerCase().startsWith('mkfs') &&
      !RESERVED.has(n.toLowerCase()),
  );
const quotedName = fc.oneof(
  plainName,
  fc.constantFrom('my table', 'Order', 'delete', 'DROP TABLE x', 'a;b', 'end]', 'q"t', 'b`t'),
);
const ident: fc.Arbitrary<Ident> = fc.oneof(
  { weight: 3, arbitrary: plainName.map((name) => ({ name, quoted: false })) },
  { weight: 1, arbitrary: quotedName.map((name) => ({ name, quoted: true })) },
);
const qualifiedName = fc.array(ident, { minLength: 1, maxLength: 2 }).map((n): Statement => [n]);
const column = ident.map((i): Statement => [[i]]);

/** A keyword in upper, lower, capitalized or alternating case (one or more words). */
function kw(words: string): fc.Arbitrary<Statement> {
  const alternate = [...words].map((c, i) => (i % 2 ? c.toLowerCase() : c.toUpperCase())).join('');
  return fc
    .constantFrom(
      words.toUpperCase(),
      words.toLowerCase(),
      words[0]!.toUpperCase() + words.slice(1).toLowerCase(),
      alternate,
    )
    .map((w) => [w]);
}

function lit(...texts: string[]): fc.Arbitrary<Statement> {
  return fc.constantFrom(...texts).map((t) => [t]);
}

function optional(arb: fc.Arbitrary<Statement>): fc.Arbitrary<Statement> {
  return fc.option(arb, { nil: undefined }).map((v) => v ?? []);
}

function seq(...arbs: fc.Arbitrary<Statement>[]): fc.Arbitrary<Statement> {
  return fc.tuple(...arbs).map((items) => items.flat());
}

const stringLiteral = lit("'x'", "'it''s'", "'DROP TABLE users'", "'a;b'", "'-- no'", "'/* x */'");
const value = fc.oneof(
  fc.nat(100_000).map((n): Statement => [String(n)]),
  stringLiteral,
  kw('null'),
);
const comparison = lit('=', '<>', '>', '<=');

const condition = fc.oneof(
  seq(column, comparison, value),
  seq(column, kw('is'), kw('null')),
  seq(column, kw('in'), lit('('), value, lit(','), value, lit(')')),
  seq(column, comparison, value, kw('and'), column, comparison, value),
);
const where = optional(seq(kw('where'), condition));
const alias = optional(seq(kw('as'), column));

const drop = seq(
  kw('drop table'),
  optional(kw('if exists')),
  qualifiedName,
  optional(kw('cascade')),
);
const dropOther = seq(kw('drop'), lit('VIEW', 'DATABASE', 'SCHEMA', 'index'), qualifiedName);
const truncate = seq(kw('truncate'), optional(kw('table')), qualifiedName);
const deleteFrom = seq(kw('delete from'), qualifiedName, alias, where);
const update = seq(
  kw('update'),
  qualifiedName,
  kw('set'),
  column,
  lit('='),
  value,
  optional(seq(lit(','), column, lit('='), value)),
  where,
);
const select = seq(
  kw('select'),
  fc.oneof(lit('*'), column),
  kw('from'),
  qualifiedName,
  where,
  optional(
    seq(
      kw('limit'),
      fc.nat(50).map((n): Statement => [String(n)]),
    ),
  ),
);
const insert = seq(
  kw('insert into'),
  qualifiedName,
  lit('('),
  column,
  lit(')'),
  kw('values'),
  lit('('),
  value,
  lit(')'),
);

const statement = fc.oneof(drop, dropOther, truncate, deleteFrom, update, select, insert);
/** What sits between two tokens: spaces, newlines, tabs, comments (some naming SQL). */
const gap = fc.constantFrom(
  ' ',
  ' ',
  '  ',
  '\n',
  '\t',
  ' \r\n ',
  ' /* note */ ',
  ' /* DROP TABLE x */ ',
  '/**/',
  ' -- DELETE FROM y\n',
  '\n--\n',
);

interface Script {
  readonly dialect: Dialect;
  readonly statements: readonly Statement[];
  readonly gaps: readonly string[];
  readonly trailingSemicolon: boolean;
}

const script: fc.Arbitrary<Script> = fc.record({
  dialect: fc.constantFrom(...DIALECTS),
  statements: fc.array(statement, { minLength: 1, maxLength: 3 }),
  gaps: fc.array(gap, { minLength: 8, maxLength: 8 }),
  trailingSemicolon: fc.boolean(),
});

function renderName(names: readonly Ident[], dialect: Dialect): string {
  const [open, close] = QUOTES[dialect];
  return names
    .map(({ name, quoted }) =>
      quoted ? open + name.replaceAll(close, close + close) + close : name,
    )
    .join('.');
}

/** Parts joined by the generated gaps, cycling; statements by `;` and a gap. */
function render(s: Script): string {
  let g = 0;
  const gapAt = () => s.gaps[g++ % s.gaps.length]!;
  const text = s.statements
    .map((parts) =>
      parts
        .map((p) => (typeof p === 'string' ? p : renderName(p, s.dialect)))
        .reduce((acc, piece) => acc + gapAt() + piece),
    )
    .join(`;${gapAt()}`);
  return s.trailingSemicolon ? `${text};` : text;
}

interface OracleStatement {
  readonly type?: string;
  readonly where?: unknown;
}

/** The statements the real parser finds, or null when it rejects the text. */
function parseSql(text: string, dialect: Dialect): OracleStatement[] | null {
  try {
    const ast = parser.astify(text, { database: dialect }) as OracleStatement | OracleStatement[];
    return Array.isArray(ast) ? ast : [ast];
  } catch {
    return null;
  }
}

/** The statement types the generator meant, in order (`DROP TABLE …` is a `drop`, and so on). */
function generatedTypes(s: Script): string[] {
  return s.statements.map((parts) => (parts[0] as string).split(' ')[0]!.toLowerCase());
}

/**
 * The parser read what was generated: one statement of the generated type for each. Otherwise it
 * read the words as something else (a grammar's fallback), and its verdict says nothing about the
 * SQL the text holds.
 */
function readAsGenerated(statements: readonly OracleStatement[], s: Script): boolean {
  const types = generatedTypes(s);
  return statements.length === types.length && statements.every((st, i) => st.type === types[i]);
}

function isDestructive(st: OracleStatement): boolean {
  if (st.type === 'drop' || st.type === 'truncate') return true;
  return (st.type === 'delete' || st.type === 'update') && st.where == null;
}

/**
 * A T-SQL [name] holding `;`, a quote or a statement keyword: the analyzer cannot know the
 * dialect, reads the text the plain way too, and fires there (fail closed, by design).
 */
function hasAmbiguousBracketName(s: Script): boolean {
  if (s.dialect !== 'transactsql') return false;
  return s.statements.some((parts) =>
    parts.some(
      (p) =>
        typeof p !== 'string' &&
        p.some((i) => i.quoted && /[;'"`]|\b(?:delete|drop)\b/i.test(i.name)),
    ),
  );
}

function detectSql(text: string) {
  return detect({ method: 'tools/call', toolName: 'query', args: { query: text } });
}

/** Seed -1771600186's counterexample, as generated before names left out reserved words. */
const MISREAD_BY_TSQL: Script = {
  dialect: 'transactsql',
  statements: [
    [
      'DROP TABLE',
      [
        { name: 'bY', quoted: false },
        { name: '_', quoted: false },
      ],
      'CASCADE',
    ],
  ],
  gaps: Array(8).fill(' '),
  trailingSemicolon: false,
};

describe('SQL detector against a real SQL parser', () => {
  it('fires on every text holding a statement the parser classifies as destructive', () => {
    let checked = 0;
    fc.assert(
      fc.property(script, (s) => {
        const text = render(s);
        const statements = parseSql(text, s.dialect);
        if (statements === null || !statements.some(isDestructive)) return;
        checked++;
        expect(detectSql(text), `${s.dialect}: ${text}`).not.toBeNull();
      }),
      { numRuns: RUNS },
    );
    // The generator must keep producing SQL the oracle accepts, or the property proves nothing.
    expect(checked).toBeGreaterThan(RUNS / 4);
  });

  it('stays silent on texts the parser finds only harmless statements in', () => {
    let checked = 0;
    fc.assert(
      fc.property(script, (s) => {
        const text = render(s);
        const statements = parseSql(text, s.dialect);
        if (statements === null || statements.some(isDestructive)) return;
        if (!readAsGenerated(statements, s) || hasAmbiguousBracketName(s)) return;
        checked++;
        expect(detectSql(text), `${s.dialect}: ${text}`).toBeNull();
      }),
      { numRuns: RUNS, examples: [[MISREAD_BY_TSQL]] },
    );
    expect(checked).toBeGreaterThan(RUNS / 10);
  });
});
