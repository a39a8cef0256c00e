// Shell commands in arguments: a light tokenizer and the destructive-command rules.
// Pure module: no I/O, no framework imports.
//
// The tokenizer handles what changes which words form a command: '…' and "…" quoting, backslash
// escapes, comments, the separators ; & && || | and newlines, subshells ( … ), command
// substitution $( … ) and `…` (also inside double quotes), and redirections (> >> 2> &>, whose
// targets are kept apart). It makes one forward pass; nesting is bounded. Each simple command is
// then checked after skipping wrappers (sudo, env, nohup, timeout, xargs, VAR=value, …); `sh -c`,
// `bash -c`, `eval` and `ssh host …` strings are analysed as commands in turn, and the SQL given
// to psql/mysql/sqlite3 goes to the SQL classifier. Only words in command position count, so
// prose such as "I ran rm -rf on it" is not a command. The exact rule list is in
// docs/inspection-detectors.md; the command tables are in shell-commands.ts.
//
// Hand-written on purpose. A general shell parser throws on an unbalanced quote or a stray
// keyword, and tool arguments are prose mixed with commands, fragments and hostile input; a parse
// error would either hide the command or block every call, and a full parse does not fit the
// per-call budget of microseconds. This tokenizer reads partial, mixed and hostile input in
// bounded time and never throws. A real parser serves as an oracle in the property tests
// (tests/data-plane/inspection/shell-oracle.test.ts).

import {
  BLOCK_DEVICES,
  COMMANDS_WITH_RULES,
  PARTITION_READ_ONLY,
  PARTITIONERS,
  POWER,
  SHELLS,
  SIMPLE_PREFIXES,
  SQL_CLIENTS,
  SSH_VALUE_FLAGS,
  WRAPPER_POSITIONALS,
  WRAPPERS,
} from './shell-commands.js';
import type { SqlAnalyzer } from './sql.js';
import type { Finding } from './types.js';

const MAX_HINT_WORD = Math.max(...COMMANDS_WITH_RULES.map((w) => w.length));

function isHintChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95
  );
}

/** Quotes and backslashes inside a word: the shell removes them (`r"m"`, `r\m`, `'r'm` run rm). */
function isQuoteChar(c: number): boolean {
  return c === 34 || c === 39 || c === 92;
}

/** One step of a case-insensitive word hash, so a word is hashed as it is scanned. */
function hashStep(h: number, c: number): number {
  return (Math.imul(h, 31) + (c | 32)) | 0;
}

const HINT_HASHES = new Set(
  COMMANDS_WITH_RULES.map((w) => {
    let h = 0;
    for (let i = 0; i < w.length; i++) h = hashStep(h, w.charCodeAt(i));
    return h;
  }),
);

/**
 * Cheap pre-check, linear with a small constant and no allocation (a regex alternation costs
 * tens of milliseconds on 256 KB of punctuation): does `s` contain, as a whole word (words end
 * at anything but letters, digits, - and _; quotes and backslashes inside a word are skipped, as
 * the shell removes them), the name of a command the rules look at, a function definition
 * `() {`, or a `/dev/` path? A hash collision only costs a parse.
 */
export function mentionsCommand(s: string): boolean {
  const n = s.length;
  let i = 0;
  while (i < n) {
    if (!isHintChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    let h = 0;
    let length = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (isHintChar(c)) {
        h = hashStep(h, c);
        length++;
      } else if (!isQuoteChar(c)) {
        break;
      }
    }
    if (length <= MAX_HINT_WORD && HINT_HASHES.has(h)) return true;
  }
  return s.includes('/dev/') || hasFunctionDefinition(s);
}

function hasFunctionDefinition(s: string): boolean {
  let at = s.indexOf('()');
  while (at >= 0) {
    let i = at + 2;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === '{') return true;
    at = s.indexOf('()', at + 2);
  }
  return false;
}

export const SHELL_LIMIT: Finding = Object.freeze({
  kind: 'inspection-limit',
  detail: 'shell nesting',
});

const MAX_NESTING = 64;
const MAX_DEPTH = 4;

const finding = (detail: string): Finding => Object.freeze({ kind: 'shell', detail });
const RM_RF = finding('rm -rf');
const RM_ROOT = finding('rm -r on a root or home directory');
const RM_ALL = finding('rm of everything (*)');
const RM_NO_PRESERVE = finding('rm --no-preserve-root');
const MKFS = finding('mkfs');
const DD_OF = finding('dd of=');
const BLOCK_WRITE = finding('write to a block device');
const FORK_BOMB = finding('fork bomb');
const FIND_DELETE = finding('find -delete');

function basename(word: string): string {
  const slash = Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\'));
  let base = (slash >= 0 ? word.slice(slash + 1) : word).toLowerCase();
  if (base.endsWith('.exe')) base = base.slice(0, -4);
  return base;
}

function isAssignment(word: string): boolean {
  const eq = word.indexOf('=');
  if (eq <= 0) return false;
  for (let i = 0; i < eq; i++) {
    const c = word.charCodeAt(i);
    const ok =
      c === 95 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (i > 0 && c >= 48 && c <= 57);
    if (!ok) return false;
  }
  return true;
}

/** `/`, `/*`, `~`, `$HOME`, `.`, `*`, or a top-level directory (`/etc`, `/home/`). */
function isRootLike(target: string): boolean {
  let t = target;
  if (t.endsWith('/*')) t = t.slice(0, -2) || '/';
  while (t.length > 1 && t.endsWith('/')) t = t.slice(0, -1);
  if (t === '' || t === '/' || t === '~' || t === '.' || t === '..' || t === '*') return true;
  if (t === '$HOME' || t === '$' + '{HOME}' || t === '/.' || t === '.*') return true;
  return t.length > 1 && t[0] === '/' && t.indexOf('/', 1) < 0;
}

function isEverythingGlob(target: string): boolean {
  return (
    target === '*' ||
    target === './*' ||
    target === '/*' ||
    target === '~/*' ||
    target === '$HOME/*' ||
    target === '.*'
  );
}

function isBlockDevice(target: string): boolean {
  if (!target.startsWith('/dev/')) return false;
  for (const prefix of BLOCK_DEVICES) if (target.startsWith(prefix, 5)) return true;
  return false;
}

function isFlag(word: string): boolean {
  return word.length > 1 && word[0] === '-';
}

interface RmFlags {
  recursive: boolean;
  force: boolean;
  noPreserveRoot: boolean;
}

function rmFlags(args: readonly string[], flags: RmFlags): string[] {
  const targets: string[] = [];
  let options = true;
  for (const arg of args) {
    if (options && arg === '--') {
      options = false;
    } else if (options && arg.startsWith('--')) {
      const name = arg.toLowerCase();
      if (name === '--recursive') flags.recursive = true;
      else if (name === '--force') flags.force = true;
      else if (name === '--no-preserve-root') flags.noPreserveRoot = true;
    } else if (options && isFlag(arg)) {
      const body = arg.slice(1);
      const lower = body.toLowerCase();
      if (body.includes('r') || body.includes('R') || 'recurse'.startsWith(lower))
        flags.recursive = true;
      if (body.includes('f') || 'force'.startsWith(lower)) flags.force = true;
    } else if (options && arg.length === 2 && arg[0] === '/') {
      // cmd.exe switches: rd /s /q, del /s /q
      const c = arg[1]!.toLowerCase();
      if (c === 's') flags.recursive = true;
      else if (c === 'q' || c === 'f') flags.force = true;
      else targets.push(arg);
    } else {
      targets.push(arg);
    }
  }
  return targets;
}

/** Analyses shell command lines and argv arrays. One per compiled detector. */
export class ShellAnalyzer {
  private readonly sql: SqlAnalyzer;
  private budget = 0;

  constructor(sql: SqlAnalyzer) {
    this.sql = sql;
  }

  /**
   * The first destructive command in `text`. `commandLike`: the string sits under a key such as
   * `command`, so a bare `shutdown` (no arguments) counts.
   */
  analyze(text: string, commandLike: boolean): Finding | null {
    this.budget = 64;
    if (hasForkBomb(text)) return FORK_BOMB;
    return this.parse(text, commandLike, 0);
  }

  /** An argv array such as `["rm", "-rf", "/"]` (already split: no tokenizing). */
  analyzeArgv(argv: readonly string[]): Finding | null {
    this.budget = 64;
    return this.evaluate(argv, [], true, 0);
  }

  private parse(s: string, commandLike: boolean, depth: number): Finding | null {
    if (depth > MAX_DEPTH || --this.budget < 0) return SHELL_LIMIT;
    // Frames: one per open subshell / substitution. ctx: 0 ( or $(, 1 $( in "", 2 `, 3 ` in "".
    const frames: { words: string[]; redirects: string[]; word: string; ctx: number }[] = [];
    let words: string[] = [];
    let redirects: string[] = [];
    let word = '';
    let inWord = false;
    let redirect = 0; // 1: next word is an output target, 2: an input source
    let dq = false;
    const n = s.length;

    const endWord = () => {
      if (!inWord) return;
      if (redirect === 1) redirects.push(word);
      else if (redirect === 0) words.push(word);
      redirect = 0;
      word = '';
      inWord = false;
    };
    const endCommand = (): Finding | null => {
      endWord();
      redirect = 0;
      if (words.length === 0 && redirects.length === 0) return null;
      const found = this.evaluate(words, redirects, commandLike, depth);
      words = [];
      redirects = [];
      return found;
    };
    const open = (ctx: number): boolean => {
      if (frames.length >= MAX_NESTING) return false;
      endWord();
      frames.push({ words, redirects, word: '', ctx });
      words = [];
      redirects = [];
      dq = false;
      return true;
    };
    const close = (): Finding | null => {
      const found = endCommand();
      const frame = frames.pop();
      if (frame !== undefined) {
        words = frame.words;
        redirects = frame.redirects;
        dq = frame.ctx === 1 || frame.ctx === 3;
        inWord = dq;
      }
      return found;
    };

    for (let i = 0; i < n; ) {
      const c = s[i]!;
      if (dq) {
        if (c === '"') {
          dq = false;
          i++;
        } else if (c === '\\') {
          const next = s[i + 1];
          if (next === '"' || next === '\\' || next === '$' || next === '`') {
            word += next;
            i += 2;
          } else {
            word += c;
            i++;
          }
        } else if (c === '$' && s[i + 1] === '(') {
          if (!open(1)) return SHELL_LIMIT;
          i += 2;
        } else if (c === '`') {
          if (!open(3)) return SHELL_LIMIT;
          i++;
        } else {
          word += c;
          i++;
        }
        continue;
      }
      let found: Finding | null = null;
      switch (c) {
        case ' ':
        case '\t':
        case '\r':
          endWord();
          i++;
          break;
        case '\n':
        case ';':
        case '&':
        case '|':
          found = endCommand();
          i++;
          break;
        case '(':
          if (!open(0)) return SHELL_LIMIT;
          i++;
          break;
        case ')':
          found = frames.length > 0 ? close() : endCommand();
          i++;
          break;
        case '`': {
          const top = frames[frames.length - 1];
          if (top !== undefined && (top.ctx === 2 || top.ctx === 3)) found = close();
          else if (!open(2)) return SHELL_LIMIT;
          i++;
          break;
        }
        case "'": {
          const end = s.indexOf("'", i + 1);
          const stop = end < 0 ? n : end;
          word += s.slice(i + 1, stop);
          inWord = true;
          i = stop + 1;
          break;
        }
        case '"':
          dq = true;
          inWord = true;
          i++;
          break;
        case '\\':
          if (s[i + 1] !== '\n' && i + 1 < n) {
            word += s[i + 1];
            inWord = true;
          }
          i += 2;
          break;
        case '#':
          if (inWord) {
            word += c;
            i++;
          } else {
            const nl = s.indexOf('\n', i);
            i = nl < 0 ? n : nl;
          }
          break;
        case '>':
        case '<':
          if (inWord && /^[0-9&]*$/.test(word)) {
            word = '';
            inWord = false;
          }
          endWord();
          redirect = c === '>' ? 1 : 2;
          i++;
          while (i < n && (s[i] === '>' || s[i] === '|' || s[i] === '&' || s[i] === '<')) i++;
          break;
        case '$':
          if (s[i + 1] === '(') {
            if (!open(0)) return SHELL_LIMIT;
            i += 2;
          } else {
            word += c;
            inWord = true;
            i++;
          }
          break;
        default:
          word += c;
          inWord = true;
          i++;
      }
      if (found !== null) return found;
    }
    let found = endCommand();
    while (found === null && frames.length > 0) found = close();
    return found;
  }

  private evaluate(
    words: readonly string[],
    redirects: readonly string[],
    commandLike: boolean,
    depth: number,
  ): Finding | null {
    for (const target of redirects) if (isBlockDevice(target)) return BLOCK_WRITE;
    let k = 0;
    while (k < words.length) {
      const w = words[k]!;
      const base = basename(w);
      if (isAssignment(w) || SIMPLE_PREFIXES.has(base)) {
        k++;
        continue;
      }
      const valued = WRAPPERS.get(base);
      if (valued === undefined) break;
      k++;
      while (k < words.length && (isFlag(words[k]!) || (base === 'env' && isAssignment(words[k]!))))
        k += valued.has(words[k]!) ? 2 : 1;
      if (WRAPPER_POSITIONALS.has(base)) k++;
    }
    if (k >= words.length) return null;
    const cmd = basename(words[k]!);
    const args = words.slice(k + 1);
    const wrapped = k > 0;
    return this.rule(cmd, args, commandLike || wrapped, depth);
  }

  private rule(cmd: string, args: string[], commandLike: boolean, depth: number): Finding | null {
    switch (cmd) {
      case 'rm':
      case 'remove-item':
      case 'ri':
      case 'del':
      case 'erase':
      case 'rd':
      case 'rmdir': {
        const flags: RmFlags = { recursive: false, force: false, noPreserveRoot: false };
        const targets = rmFlags(args, flags);
        const windows = cmd !== 'rm' && cmd !== 'rmdir';
        if (cmd === 'rmdir' && !flags.recursive) return null;
        if (flags.noPreserveRoot) return RM_NO_PRESERVE;
        if (flags.recursive && flags.force)
          return windows ? finding(`${cmd} recurse force`) : RM_RF;
        if (flags.recursive && targets.some(isRootLike)) return RM_ROOT;
        if ((cmd === 'rd' || cmd === 'rmdir') && flags.recursive) return finding(`${cmd} /s`);
        if (targets.some(isEverythingGlob)) return RM_ALL;
        return null;
      }
      case 'mkswap':
      case 'mke2fs':
        return MKFS;
      case 'dd':
        return args.some((a) => a.startsWith('of=')) ? DD_OF : null;
      case 'shred':
      case 'wipefs':
      case 'blkdiscard':
        return args.length > 0 || commandLike ? finding(cmd) : null;
      case 'init':
      case 'telinit':
        return args[0] === '0' || args[0] === '6' ? finding(`${cmd} ${args[0]}`) : null;
      case 'systemctl': {
        const verb = args.find((a) => !isFlag(a));
        return verb === 'poweroff' || verb === 'reboot' || verb === 'halt' || verb === 'kexec'
          ? finding(`systemctl ${verb}`)
          : null;
      }
      case 'kill':
        return killsInit(args);
      case 'chmod':
      case 'chown':
      case 'chgrp': {
        const recursive = args.some(
          (a) => a === '--recursive' || (isFlag(a) && !a.startsWith('--') && a.includes('R')),
        );
        const targets = args.filter((a) => !isFlag(a)).slice(1);
        return recursive && targets.some(isRootLike)
          ? finding(`${cmd} -R on a root directory`)
          : null;
      }
      case 'git':
        return gitRule(args);
      case 'find': {
        if (args.includes('-delete')) return FIND_DELETE;
        const exec = args.findIndex((a) => a === '-exec' || a === '-execdir');
        if (exec < 0) return null;
        let end = args.findIndex((a, i) => i > exec && (a === ';' || a === '+' || a === '\\;'));
        if (end < 0) end = args.length;
        return this.evaluate(args.slice(exec + 1, end), [], true, depth);
      }
      case 'truncate':
        return args.some((a) => a === '-s' || a.startsWith('--size') || a.startsWith('-s'))
          ? finding('truncate -s')
          : null;
      case 'curl':
        return curlDelete(args);
      case 'wget':
        return args.some((a) => a.toUpperCase() === '--METHOD=DELETE')
          ? httpFinding('wget --method=DELETE')
          : null;
      case 'http':
      case 'https':
        return args.find((a) => !isFlag(a))?.toUpperCase() === 'DELETE'
          ? httpFinding('httpie DELETE')
          : null;
      case 'kubectl':
        return firstVerb(args) === 'delete' ? finding('kubectl delete') : null;
      case 'terraform': {
        const verb = firstVerb(args);
        return verb === 'destroy' || (verb === 'apply' && args.includes('-destroy'))
          ? finding('terraform destroy')
          : null;
      }
      case 'helm': {
        const verb = firstVerb(args);
        return verb === 'uninstall' || verb === 'delete' ? finding(`helm ${verb}`) : null;
      }
      case 'docker':
      case 'podman': {
        const positional = args.filter((a) => !isFlag(a));
        const [a, b] = positional;
        if ((a === 'system' || a === 'volume') && b === 'prune')
          return finding(`${cmd} ${a} prune`);
        if (a === 'volume' && b === 'rm') return finding(`${cmd} volume rm`);
        return null;
      }
      case 'aws': {
        const positional = args.filter((a) => !isFlag(a));
        const [service, op] = positional;
        if (service === 's3' && op === 'rb') return finding('aws s3 rb');
        if (service === 's3' && op === 'rm' && args.includes('--recursive'))
          return finding('aws s3 rm --recursive');
        if (op !== undefined && /^(?:delete|terminate|remove)-/.test(op))
          return finding(`aws ${service} ${op}`);
        return null;
      }
      case 'gsutil': {
        const verb = firstVerb(args);
        if (verb === 'rb') return finding('gsutil rb');
        return verb === 'rm' && args.some((a) => a === '-r' || a === '-R' || a === '-a')
          ? finding('gsutil rm -r')
          : null;
      }
      case 'gcloud':
        return args.includes('delete') ? finding('gcloud … delete') : null;
      case 'redis-cli': {
        const verb = args.find((a) => /^flush(?:all|db)$/i.test(a));
        return verb === undefined ? null : finding(`redis-cli ${verb.toUpperCase()}`);
      }
      case 'dropdb':
        return finding('dropdb');
      case 'eval':
        return args.length === 0 ? null : this.parse(args.join(' '), true, depth + 1);
      case 'ssh': {
        let i = 0;
        while (i < args.length && isFlag(args[i]!)) i += SSH_VALUE_FLAGS.has(args[i]!) ? 2 : 1;
        const rest = args.slice(i + 1);
        return rest.length === 0 ? null : this.parse(rest.join(' '), true, depth + 1);
      }
      case 'format':
        return args.some((a) => /^[a-z]:\\?$/i.test(a)) ? finding('format (drive)') : null;
      default:
        break;
    }
    if (cmd.startsWith('mkfs')) return MKFS;
    if (POWER.has(cmd)) {
      if (args.includes('-c')) return null; // shutdown -c cancels
      return args.length > 0 || commandLike ? finding(cmd) : null;
    }
    if (PARTITIONERS.has(cmd)) {
      return args.some((a) => PARTITION_READ_ONLY.has(a)) || (args.length === 0 && !commandLike)
        ? null
        : finding(cmd);
    }
    if (SHELLS.has(cmd)) {
      const c = args.findIndex((a) => isFlag(a) && !a.startsWith('--') && a.includes('c'));
      const script = c >= 0 ? args[c + 1] : undefined;
      return script === undefined ? null : this.parse(script, true, depth + 1);
    }
    if (SQL_CLIENTS.has(cmd)) {
      for (const arg of args) {
        if (arg.length < 8) continue;
        const sqlText =
          arg.startsWith('--') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
        const found = this.sql.destructive(sqlText);
        if (found !== null) return found;
      }
    }
    return null;
  }
}

function httpFinding(detail: string): Finding {
  return { kind: 'http-method', detail };
}

function firstVerb(args: readonly string[]): string | undefined {
  return args.find((a) => !isFlag(a))?.toLowerCase();
}

function killsInit(args: readonly string[]): Finding | null {
  let i = 0;
  // The first option is the signal (-9, -KILL, -s KILL, --signal KILL); the rest are pids.
  if (args[0] === '-s' || args[0] === '-n' || args[0] === '--signal') i = 2;
  else if (args[0] !== undefined && isFlag(args[0]) && args[0] !== '--') i = 1;
  for (; i < args.length; i++) {
    const pid = args[i];
    if (pid === '1' || pid === '-1') return finding(`kill ${pid}`);
  }
  return null;
}

function gitRule(args: readonly string[]): Finding | null {
  let i = 0;
  while (i < args.length && isFlag(args[i]!)) i += args[i] === '-C' || args[i] === '-c' ? 2 : 1;
  const verb = args[i];
  const rest = args.slice(i + 1);
  const shortFlag = (c: string) =>
    rest.some((a) => isFlag(a) && !a.startsWith('--') && a.includes(c));
  switch (verb) {
    case 'push':
      if (rest.includes('--force') || rest.includes('--mirror') || shortFlag('f'))
        return finding('git push --force');
      if (rest.some((a) => a.startsWith('+') && a.length > 1)) return finding('git push --force');
      if (
        rest.includes('--delete') ||
        shortFlag('d') ||
        rest.some((a) => a.startsWith(':') && a.length > 1)
      )
        return finding('git push --delete');
      return null;
    case 'reset':
      return rest.includes('--hard') ? finding('git reset --hard') : null;
    case 'clean':
      return rest.includes('--force') || shortFlag('f') ? finding('git clean -f') : null;
    case 'branch':
      return rest.includes('-D') ? finding('git branch -D') : null;
    default:
      return null;
  }
}

function curlDelete(args: readonly string[]): Finding | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    let method: string | undefined;
    if (a === '-X' || a === '--request') method = args[i + 1];
    else if (a.startsWith('-X')) method = a.slice(2);
    else if (a.startsWith('--request=')) method = a.slice(10);
    if (method !== undefined && method.toUpperCase() === 'DELETE')
      return httpFinding('curl -X DELETE');
  }
  return null;
}

/** `name(){ name|name& };name` in any spacing (the classic is `:(){ :|:& };:`). */
export function hasForkBomb(s: string): boolean {
  let at = s.indexOf('()');
  while (at >= 0) {
    let i = at + 2;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === '{') {
      let b = at - 1;
      while (b >= 0 && (s[b] === ' ' || s[b] === '\t')) b--;
      let a = b;
      while (a >= 0 && b - a <= 32 && /[\w:.-]/.test(s[a]!)) a--;
      const name = s.slice(a + 1, b + 1);
      if (name.length > 0 && name.length <= 32) {
        let body = '';
        for (let j = i + 1; j < s.length && body.length < 2 * name.length + 4 && s[j] !== '}'; j++)
          if (s[j] !== ' ' && s[j] !== '\t') body += s[j];
        if (body.startsWith(`${name}|${name}&`)) return true;
      }
    }
    at = s.indexOf('()', at + 2);
  }
  return false;
}
