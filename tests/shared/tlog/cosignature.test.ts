// cosignature/v1 (c2sp.org/tlog-cosignature): a cosignature made here by the letter of the spec
// (key id with 0x04, big-endian u64 time, the "cosignature/v1\ntime N\n" message) verifies, and
// one with another time, body, name or key does not; witness keys parse as the spec writes them.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  cosignedAt,
  formatWitnessKey,
  parseNote,
  parseWitnessKey,
} from '../../../shared/tlog/index.js';

const TEXT = 'gateway.example/audit/t1\n42\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';

function witness(name: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const id = createHash('sha256')
    .update(`${name}\n`)
    .update(Buffer.from([4]))
    .update(raw)
    .digest()
    .subarray(0, 4);
  const line = (text: string, time: bigint) => {
    const t = Buffer.alloc(8);
    t.writeBigUInt64BE(time);
    const signature = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), privateKey);
    return `\u2014 ${name} ${Buffer.concat([id, t, signature]).toString('base64')}\n`;
  };
  return {
    raw,
    line,
    vkey: `${name}+${id.toString('hex')}+${Buffer.concat([Buffer.from([4]), raw]).toString('base64')}`,
  };
}

describe('cosignature/v1', () => {
  const w = witness('witness.example/w1');
  const key = parseWitnessKey(w.vkey);
  if (typeof key === 'string') throw new Error(key);

  it('parses the witness key the spec writes, and formats it back', () => {
    expect(formatWitnessKey(key.name, key.publicKey)).toBe(w.vkey);
    expect(parseWitnessKey(w.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBe(
      'the key id does not match the name and key',
    );
    // A signed-note (0x01) key is not a cosignature key.
    const note = `${key.name}+00000000+${Buffer.concat([Buffer.from([1]), w.raw]).toString('base64')}`;
    expect(parseWitnessKey(note)).toBe(
      'the key is not a cosignature/v1 Ed25519 key (0x04 and 32 bytes)',
    );
  });

  it('verifies a cosignature and gives its time; refuses another body, time, name or key', () => {
    const note = parseNote(`${TEXT}\n${w.line(TEXT, 1679315147n)}`);
    if (typeof note === 'string') throw new Error(note);
    expect(cosignedAt(note.text, note.signatures, key)).toBe(1679315147);
    const other = TEXT.replace('\n42\n', '\n43\n');
    expect(cosignedAt(other, note.signatures, key)).toBeNull();
    const line = w.line(TEXT, 1679315147n);
    const bytes = Buffer.from(line.slice(line.lastIndexOf(' ') + 1).trim(), 'base64');
    bytes.writeBigUInt64BE(1679315148n, 4);
    const retimed = parseNote(`${TEXT}\n\u2014 ${key.name} ${bytes.toString('base64')}\n`);
    if (typeof retimed === 'string') throw new Error(retimed);
    expect(cosignedAt(retimed.text, retimed.signatures, key)).toBeNull();
    const stranger = parseWitnessKey(witness('witness.example/w1').vkey);
    if (typeof stranger === 'string') throw new Error(stranger);
    expect(cosignedAt(note.text, note.signatures, stranger)).toBeNull();
  });
});
