// The destructive-operation detector (inspect pipeline step 4, 403 MCP_DESTRUCTIVE_OP_BLOCKED when
// the tenant's policy denies destructive operations). Pure module: no I/O, no framework imports.
//
// compileDestructiveDetector does the per-configuration work (pattern sets, analyzers, the
// argument walker); the returned closure does bounded work per call and never throws. Checks, in
// order, the first that fires answers:
//   1. annotation  — the upstream marked the tool `destructiveHint: true` in tools/list;
//   2. tool-name   — a word of the tool name matches a configured pattern;
//   3. arguments   — walked within the inspection limits: HTTP DELETE in a method field, SQL
//                    statements, shell command lines, argv arrays, {command, args} pairs;
//   4. inspection-limit — the arguments exceed the limits, so they cannot be cleared (fail closed).
// The rules and their reasons are in docs/inspection-detectors.md.

import {
  ArgumentWalker,
  INSPECTION_FAILED,
  type InspectionLimits,
  type LeafVisitor,
  resolveInspectionLimits,
} from './limits.js';
import { mentionsCommand, ShellAnalyzer } from './shell.js';
import { SQL_DESTRUCTIVE_HINT, SqlAnalyzer } from './sql.js';
import type { CallDetector, DetectorSignal, Finding } from './types.js';
import { compileWordPatterns, splitWords } from './words.js';

export type { CallDetector, DetectorSignal, ToolCallView } from './types.js';

export interface DestructiveDetectorOptions {
  /** The tenant's list; it replaces DEFAULT_DESTRUCTIVE_TOOL_PATTERNS. `*` globs within a word. */
  readonly toolPatterns: readonly string[];
  readonly limits?: Partial<InspectionLimits>;
}

/** Argument keys whose string value is an HTTP method. */
const METHOD_KEYS = new Set([
  'method',
  'Method',
  'METHOD',
  'httpMethod',
  'HttpMethod',
  'http_method',
  'http-method',
  'verb',
  'Verb',
  'httpVerb',
  'http_verb',
  'requestMethod',
  'request_method',
]);
/** Argument keys whose string value is a command line (a bare `shutdown` counts there). */
const COMMAND_KEYS = new Set([
  'command',
  'cmd',
  'script',
  'shell',
  'commandLine',
  'command_line',
  'cmdline',
  'exec',
  'run',
  'program',
  'executable',
  'code',
]);
/** Keys holding the argv of a `command` sibling: {command: "rm", args: ["-rf", "/"]}. */
const ARGV_KEYS = ['args', 'argv', 'arguments', 'params', 'parameters'];
/** Words that make a tool an HTTP request tool (with `delete` in its name: http-method). */
const HTTP_TOOL_WORDS = new Set(['http', 'https', 'rest', 'request', 'curl', 'fetch', 'api']);
const MAX_ARGV = 256;
const MAX_CACHED_NAMES = 4096;

const ANNOTATION: DetectorSignal = Object.freeze({
  kind: 'annotation',
  detail: 'destructiveHint: true',
});
const HTTP_DELETE: Finding = Object.freeze({ kind: 'http-method', detail: 'DELETE' });

function isDeleteMethod(value: string): boolean {
  let a = 0;
  let b = value.length;
  while (a < b && value.charCodeAt(a) <= 32) a++;
  while (b > a && value.charCodeAt(b - 1) <= 32) b--;
  return b - a === 6 && value.slice(a, b).toUpperCase() === 'DELETE';
}

function stringArray(value: unknown, max: number): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > max) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') return null;
    out.push(item);
  }
  return out;
}

function withPath(found: Finding, path: string | undefined): DetectorSignal {
  return path === undefined
    ? { kind: found.kind, detail: found.detail }
    : { kind: found.kind, detail: found.detail, path };
}

export function compileDestructiveDetector(options: DestructiveDetectorOptions): CallDetector {
  const patterns = compileWordPatterns(options.toolPatterns);
  const walker = new ArgumentWalker(resolveInspectionLimits(options.limits));
  const sql = new SqlAnalyzer();
  const shell = new ShellAnalyzer(sql);
  const nameCache = new Map<string, DetectorSignal | null>();

  const checkName = (name: string): DetectorSignal | null => {
    const cached = nameCache.get(name);
    if (cached !== undefined) return cached;
    const words = splitWords(name);
    let signal: DetectorSignal | null = null;
    const pattern = patterns.match(words);
    if (pattern !== null) {
      signal = Object.freeze({ kind: 'tool-name', detail: `matches "${pattern}"` });
    } else if (words.includes('delete') && words.some((w) => HTTP_TOOL_WORDS.has(w))) {
      signal = Object.freeze({ kind: 'http-method', detail: 'DELETE (tool name)' });
    }
    if (nameCache.size >= MAX_CACHED_NAMES) nameCache.clear();
    nameCache.set(name, signal);
    return signal;
  };

  const visitor: LeafVisitor = {
    visitString(value, w) {
      const key = w.key();
      if (key !== undefined && METHOD_KEYS.has(key) && isDeleteMethod(value)) return HTTP_DELETE;
      if (value.length >= 8 && SQL_DESTRUCTIVE_HINT.test(value)) {
        const found = sql.destructive(value);
        if (found !== null) return found;
      }
      const commandKey = key !== undefined && COMMAND_KEYS.has(key);
      if (mentionsCommand(value) || (commandKey && value.length <= 16)) {
        const found = shell.analyze(value, commandKey);
        if (found !== null) return found;
      }
      if (w.index() === 0 && value.length <= 64) {
        const argv = stringArray(w.parent(), MAX_ARGV);
        if (argv !== null && argv.length > 1 && argv.some(mentionsCommand)) {
          if (!w.takeCandidate()) return null;
          const found = shell.analyzeArgv(argv);
          if (found !== null) return found;
        }
      }
      if (commandKey) {
        const parent = w.parent() as Record<string, unknown>;
        for (const argvKey of ARGV_KEYS) {
          if (!Object.hasOwn(parent, argvKey)) continue;
          const rest = stringArray(parent[argvKey], MAX_ARGV);
          if (rest === null) continue;
          const argv = value.trim().split(/\s+/).concat(rest);
          const found = shell.analyzeArgv(argv);
          if (found !== null) return found;
        }
      }
      return null;
    },
    visitNumber() {
      return null;
    },
    visitBoolean() {
      return null;
    },
  };

  return (call) => {
    try {
      const annotations = call.annotations;
      if (
        typeof annotations === 'object' &&
        annotations !== null &&
        annotations.destructiveHint === true
      )
        return ANNOTATION;
      const name = call.toolName;
      if (typeof name === 'string' && name.length > 0) {
        const signal = checkName(name);
        if (signal !== null) return signal;
      }
      const found = walker.walk(call.args, visitor);
      if (found === null) return null;
      return withPath(found, walker.lastPath());
    } catch {
      return withPath(INSPECTION_FAILED, undefined);
    }
  };
}
