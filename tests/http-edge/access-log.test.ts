// AGENT_GATEWAY_ACCESS_LOG: per-request log lines only when asked for (the decision lines are
// separate and always written). Health and metrics routes log only warnings either way.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createReadiness } from '../../http-edge/health.js';
import { buildServer } from '../../http-edge/server.js';

async function loggedMessages(accessLog: boolean): Promise<string[]> {
  const messages: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      messages.push((JSON.parse(String(chunk)) as { msg: string }).msg);
      done();
    },
  });
  const app = await buildServer({
    logger: pino({ level: 'info' }, sink),
    readiness: createReadiness(),
    accessLog,
  });
  app.get('/probe', async () => ({ ok: true }));
  try {
    expect((await app.inject('/probe')).statusCode).toBe(200);
  } finally {
    await app.close();
  }
  return messages;
}

describe('the access log', () => {
  it('writes an incoming and a completed line per request when switched on', async () => {
    const messages = await loggedMessages(true);
    expect(messages).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });

  it('writes no per-request line by default', async () => {
    const messages = await loggedMessages(false);
    expect(messages).not.toContain('incoming request');
    expect(messages).not.toContain('request completed');
  });
});
