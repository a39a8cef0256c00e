// A minimal C2SP tlog-witness (https://c2sp.org/tlog-witness), written for the tests from the
// specification: `POST /add-checkpoint` with the old size line, the consistency proof lines, a
// blank line and the checkpoint; the log's signature checked against the keys it trusts per
// origin prefix (404 for an unknown origin, 403 without a valid signature), 400 when the old size
// is above the checkpoint's, 409 (`text/x.tlog.size`, its size) when the old size is not the one
// it cosigned last or the roots of one size differ, 422 for a proof that does not verify, and
// otherwise its cosignature/v1 (c2sp.org/tlog-cosignature) signed with its own Ed25519 key. Its
// key id and signed message are computed here, apart from the gateway's shared/tlog/cosignature.ts.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyConsistency } from '../../shared/tlog/index.js';

export interface TestWitness {
  readonly url: string;
  readonly name: string;
  /** `<name>+<id>+<base64(0x04 ‖ key)>`. */
  readonly verifierKey: string;
  /** Checkpoints cosigned, in order: origin and size. */
  readonly cosigned: { origin: string; size: number }[];
  /** Answers 503 to this many next requests. */
  failNext: number;
  /** The log it trusts: origins `<prefix>/…` signed by `logKey` (set once the log's key exists). */
  trust: { prefix: string; logKey: string } | undefined;
  /** The latest size cosigned per origin. */
  readonly state: Map<string, { size: number; root: Buffer }>;
  close(): Promise<void>;
}

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A log key the witness trusts: a signed-note verifier key (0x01 Ed25519). */
function logKey(vkey: string): {
  name: string;
  id: Buffer;
  key: ReturnType<typeof createPublicKey>;
} {
  const [name, id, key] = [
    vkey.slice(0, vkey.indexOf('+')),
    vkey.split('+')[1] as string,
    vkey.slice(vkey.indexOf('+', vkey.indexOf('+') + 1) + 1),
  ];
  const raw = Buffer.from(key, 'base64').subarray(1);
  return {
    name,
    id: Buffer.from(id, 'hex'),
    key: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' }),
  };
}

export async function startTestWitness(options: { name: string }): Promise<TestWitness> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const keyId = createHash('sha256')
    .update(`${options.name}\n`)
    .update(Buffer.from([0x04]))
    .update(raw)
    .digest()
    .subarray(0, 4);
  const verifierKey = `${options.name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([0x04]), raw]).toString('base64')}`;
  const state = new Map<string, { size: number; root: Buffer }>();
  const cosigned: { origin: string; size: number }[] = [];
  const witness: TestWitness = {
    url: '',
    name: options.name,
    verifierKey,
    cosigned,
    failNext: 0,
    trust: undefined,
    state,
    close: async () => {},
  };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const answer = (status: number, text: string, type = 'text/plain') =>
        response.writeHead(status, { 'content-type': type }).end(text);
      if (request.method !== 'POST' || request.url !== '/add-checkpoint') return answer(404, 'no');
      if (witness.failNext > 0) {
        witness.failNext--;
        return answer(503, 'down');
      }
      const split = body.indexOf('\n\n');
      const head = body.slice(0, split).split('\n');
      const note = body.slice(split + 2);
      const old = Number((head[0] ?? '').replace(/^old /, ''));
      const proof = head.slice(1).map((line) => Buffer.from(line, 'base64'));
      const sigAt = note.lastIndexOf('\n\n');
      const text = note.slice(0, sigAt + 1);
      const [origin, sizeLine, rootLine] = text.split('\n') as [string, string, string];
      if (witness.trust === undefined || !origin.startsWith(`${witness.trust.prefix}/`)) {
        return answer(404, 'unknown origin');
      }
      const trusted = logKey(witness.trust.logKey);
      const signed = note
        .slice(sigAt + 2)
        .split('\n')
        .filter((line) => line.startsWith(`\u2014 ${trusted.name} `))
        .some((line) => {
          const bytes = Buffer.from(line.slice(line.lastIndexOf(' ') + 1), 'base64');
          return (
            bytes.subarray(0, 4).equals(trusted.id) &&
            verify(null, Buffer.from(text), trusted.key, bytes.subarray(4))
          );
        });
      if (!signed) return answer(403, 'no trusted signature');
      const size = Number(sizeLine);
      const root = Buffer.from(rootLine, 'base64');
      if (old > size) return answer(400, 'old size above the checkpoint');
      const latest = state.get(origin) ?? { size: 0, root: Buffer.alloc(0) };
      if (old !== latest.size) return answer(409, `${latest.size}\n`, 'text/x.tlog.size');
      if (old === 0 && proof.length > 0) return answer(422, 'a proof from size 0');
      if (old === size && old > 0 && !root.equals(latest.root))
        return answer(409, `${latest.size}\n`, 'text/x.tlog.size');
      if (old > 0 && old < size && !verifyConsistency(old, size, latest.root, root, proof)) {
        return answer(422, 'inconsistent');
      }
      state.set(origin, { size, root });
      cosigned.push({ origin, size });
      const time = BigInt(Math.floor(Date.now() / 1000));
      const timeBytes = Buffer.alloc(8);
      timeBytes.writeBigUInt64BE(time);
      const signature = sign(
        null,
        Buffer.from(`cosignature/v1\ntime ${time}\n${text}`),
        createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })),
      );
      const line = `\u2014 ${options.name} ${Buffer.concat([keyId, timeBytes, signature]).toString('base64')}\n`;
      return answer(200, line);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (witness as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  witness.close = () => new Promise((resolve) => server.close(() => resolve()));
  return witness;
}
