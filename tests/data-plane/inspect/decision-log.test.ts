// Every inspect answer is one structured log line (`inspect decision`): denies at info, allows at
// debug, with what an operator needs to find the call and nothing secret (no key, no arguments).
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectBody, startTestGateway, type TestGateway } from '../../support/gateway.js';

/** A pino logger whose lines are kept in memory, parsed. */
function capturingLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}

const decisions = (lines: readonly Record<string, unknown>[]) =>
  lines.filter((line) => line.msg === 'inspect decision');

describe.each(['info', 'debug'])('inspect decision lines at level %s', (level) => {
  let gateway: TestGateway;
  let captured: ReturnType<typeof capturingLogger>;
  beforeAll(async () => {
    captured = capturingLogger(level);
    gateway = await startTestGateway('pglite', { logger: captured.logger });
    await gateway.setPolicy(gateway.tenant.id, { trustedServers: ['files'] });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('logs a deny once, with the call named and no secret in it', async () => {
    const secretArgument = 'do-not-log-this-argument';
    const { status, body } = await gateway.inspect(
      inspectBody(gateway.tenant.agentId, { server: 'nowhere', args: { secretArgument } }),
    );
    expect(status).toBe(403);
    const lines = decisions(captured.lines).filter((l) => l.inspectionId === body.inspectionId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      tenantId: gateway.tenant.id,
      agentId: gateway.tenant.agentId,
      serverId: 'nowhere',
      tool: 'echo',
      mode: 'simulation',
      decision: 'deny',
      reasonCode: 'MCP_SERVER_NOT_WHITELISTED',
      enforced: true,
      ms: expect.any(Number),
    });
    const text = JSON.stringify(captured.lines);
    expect(text).not.toContain(secretArgument);
    expect(text).not.toContain(gateway.tenant.key);
  });

  it(`logs an allow ${level === 'debug' ? 'at debug' : 'not at all'}`, async () => {
    const { status, body } = await gateway.inspect(inspectBody(gateway.tenant.agentId));
    expect(status).toBe(200);
    const lines = decisions(captured.lines).filter((l) => l.inspectionId === body.inspectionId);
    if (level === 'debug') {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 20, decision: 'allow', reasonCode: null });
    } else {
      expect(lines).toHaveLength(0);
    }
  });

  it('writes no per-request access lines by default', () => {
    expect(captured.lines.filter((l) => l.msg === 'incoming request')).toHaveLength(0);
    expect(captured.lines.filter((l) => l.msg === 'request completed')).toHaveLength(0);
  });
});
