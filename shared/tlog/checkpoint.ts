// C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): the body of a signed note naming a
// log's state: the origin line, the tree size in decimal, the root hash in base64, each ending in
// a newline, then optional extension lines (kept, never interpreted). Pure.
import { HASH_BYTES } from './merkle.js';

export interface Checkpoint {
  /** The log's name: no whitespace, no `+`. */
  readonly origin: string;
  readonly size: number;
  readonly rootHash: Uint8Array;
  /** Extension lines after the root, without their newlines. */
  readonly extensions?: readonly string[];
}

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Whether `origin` may name a log: a schema-less URL without whitespace or `+`. */
export function isValidOrigin(origin: string): boolean {
  return origin.length > 0 && origin.length <= 1000 && !/[\s+]/u.test(origin);
}

export function formatCheckpoint(checkpoint: Checkpoint): string {
  if (!isValidOrigin(checkpoint.origin)) {
    throw new RangeError(`invalid checkpoint origin: ${JSON.stringify(checkpoint.origin)}`);
  }
  if (checkpoint.rootHash.length !== HASH_BYTES) throw new RangeError('a root hash has 32 bytes');
  const extensions = (checkpoint.extensions ?? []).map((line) => `${line}\n`).join('');
  const root = Buffer.from(checkpoint.rootHash).toString('base64');
  return `${checkpoint.origin}\n${checkpoint.size}\n${root}\n${extensions}`;
}

/** The checkpoint a note's text carries, or a sentence saying why it carries none. */
export function parseCheckpoint(text: string): Checkpoint | string {
  if (!text.endsWith('\n')) return 'a checkpoint ends with a newline';
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) return 'a checkpoint has an origin, a tree size and a root hash line';
  const [origin, size, root, ...extensions] = lines as [string, string, string, ...string[]];
  if (!isValidOrigin(origin)) return 'the origin line is empty or holds whitespace or "+"';
  if (!DECIMAL.test(size) || !Number.isSafeInteger(Number(size))) {
    return 'the tree size line is not a decimal number';
  }
  if (!BASE64.test(root)) return 'the root hash line is not base64';
  const rootHash = Buffer.from(root, 'base64');
  if (rootHash.length !== HASH_BYTES || rootHash.toString('base64') !== root) {
    return 'the root hash line is not the base64 of 32 bytes';
  }
  if (extensions.some((line) => line.length === 0)) return 'a checkpoint holds no blank line';
  return {
    origin,
    size: Number(size),
    rootHash: Uint8Array.from(rootHash),
    ...(extensions.length > 0 ? { extensions } : {}),
  };
}
