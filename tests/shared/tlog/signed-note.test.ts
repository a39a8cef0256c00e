import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatCheckpoint,
  formatVerifierKey,
  noteSignedBy,
  noteSigner,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  signNote,
} from '../../../shared/tlog/index.js';

const signer = noteSigner('gateway.example/audit', randomBytes(32));
const verifierKey = parseVerifierKey(formatVerifierKey(signer.name, signer.publicKey));

describe('signed notes (C2SP signed-note)', () => {
  it('signs a text that its verifier key verifies, and nothing else', () => {
    if (typeof verifierKey === 'string') throw new Error(verifierKey);
    const note = signNote('origin/x\n1\nAAAA\n', [signer]);
    const parsed = parseNote(note);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(parsed.text).toBe('origin/x\n1\nAAAA\n');
    expect(note).toMatch(/^origin\/x\n1\nAAAA\n\n— gateway\.example\/audit [A-Za-z0-9+/]+=*\n$/);
    expect(noteSignedBy(parsed, verifierKey)).toBe(true);
    const edited = parseNote(note.replace('\n1\n', '\n2\n'));
    if (typeof edited === 'string') throw new Error(edited);
    expect(noteSignedBy(edited, verifierKey)).toBe(false);
    const other = noteSigner('gateway.example/audit', randomBytes(32));
    const otherKey = parseVerifierKey(formatVerifierKey(other.name, other.publicKey));
    if (typeof otherKey === 'string') throw new Error(otherKey);
    expect(noteSignedBy(parsed, otherKey)).toBe(false);
  });

  it('writes and reads verifier keys', () => {
    const text = formatVerifierKey(signer.name, signer.publicKey);
    expect(text).toMatch(/^gateway\.example\/audit\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(parseVerifierKey(text)).toMatchObject({ name: signer.name, keyId: signer.keyId });
    expect(parseVerifierKey(text.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBe(
      'the key id does not match the name and key',
    );
    expect(typeof parseVerifierKey('name+abc')).toBe('string');
    expect(typeof parseVerifierKey('na me+0000000+AAAA')).toBe('string');
  });

  it('refuses notes that are not signed notes', () => {
    for (const bad of [
      'no blank line\n',
      'a\n\nnot a signature\n',
      'a\n\n— name\n',
      'a\n\n— x AA\n',
      'a\r\n\n— x AAAAAAAA\n',
    ]) {
      expect(typeof parseNote(bad)).toBe('string');
    }
  });

  it('never throws on arbitrary input (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const parsed = parseNote(text);
        if (typeof parsed !== 'string' && typeof verifierKey !== 'string') {
          noteSignedBy(parsed, verifierKey);
        }
        parseVerifierKey(text);
        parseCheckpoint(text);
      }),
    );
  });
});

describe('checkpoints (C2SP tlog-checkpoint)', () => {
  const root = Uint8Array.from(randomBytes(32));

  it('round-trips a checkpoint, extension lines included', () => {
    const text = formatCheckpoint({ origin: 'gateway.example/audit/t1', size: 42, rootHash: root });
    expect(text).toBe(`gateway.example/audit/t1\n42\n${Buffer.from(root).toString('base64')}\n`);
    expect(parseCheckpoint(text)).toEqual({
      origin: 'gateway.example/audit/t1',
      size: 42,
      rootHash: root,
    });
    const extended = formatCheckpoint({
      origin: 'o',
      size: 0,
      rootHash: root,
      extensions: ['x y'],
    });
    expect(parseCheckpoint(extended)).toMatchObject({ extensions: ['x y'] });
  });

  it('names what is wrong with a body that is not a checkpoint', () => {
    const b64 = Buffer.from(root).toString('base64');
    expect(parseCheckpoint(`o\n01\n${b64}\n`)).toBe('the tree size line is not a decimal number');
    expect(parseCheckpoint(`o\n-1\n${b64}\n`)).toBe('the tree size line is not a decimal number');
    expect(parseCheckpoint(`o p\n1\n${b64}\n`)).toBe(
      'the origin line is empty or holds whitespace or "+"',
    );
    expect(parseCheckpoint('o\n1\nAAAA\n')).toBe(
      'the root hash line is not the base64 of 32 bytes',
    );
    expect(parseCheckpoint(`o\n1\n${b64}`)).toBe('a checkpoint ends with a newline');
    expect(parseCheckpoint('o\n1\n')).toBe(
      'a checkpoint has an origin, a tree size and a root hash line',
    );
  });
});
