// The kill applier on one data plane, with real parts: the snapshot store, the execution registry
// and the upstream client forwarding to a real MCP SDK upstream. Applying a kill aborts the
// agent's running forwards, makes later ones start aborted, forgets the agent's upstream sessions
// (the next forward under its session key opens a new session) and leaves other agents alone;
// applying it again changes nothing.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionRegistry } from '../../../data-plane/executions.js';
import { createKillApplier } from '../../../data-plane/kill/apply-kill.js';
import { SnapshotStore } from '../../../data-plane/store/snapshot-store.js';
import { createUpstreamClient, type UpstreamClient } from '../../../data-plane/upstream/index.js';
import type { AgentKillDelta } from '../../../shared/config-stream/protocol.js';
import { asAgentId } from '../../../shared/ids.js';
import { makeSnapshot, makeTenant } from '../../shared/snapshot/snapshot-fixture.js';
import { type McpUpstream, startMcpUpstream } from '../../support/mcp-upstream.js';

const delta: AgentKillDelta = {
  seq: 1,
  killId: 'kill-1',
  tenantId: 't',
  agentId: 't-agent',
  publicKey: 't-public-key',
  killedAt: new Date(0).toISOString(),
  statusLists: [],
};

describe('createKillApplier', () => {
  let upstream: McpUpstream;
  let client: UpstreamClient;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ responseMode: 'json', stateful: true, blockTool: true });
    client = createUpstreamClient();
  });
  afterAll(async () => {
    await client.close();
    await upstream.close();
  });

  const forward = (sessionKey: string, tool: string, signal?: AbortSignal) =>
    client.forward({
      target: { serverKey: 't/files', url: upstream.url },
      sessionKey,
      message: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: tool, arguments: {} },
      },
      ...(signal ? { signal } : {}),
    });

  it('aborts, refuses later forwards, forgets the sessions of the agent only; a repeat changes nothing', async () => {
    const store = new SnapshotStore();
    store.apply(makeSnapshot(1, [makeTenant('t')]));
    const executions = new ExecutionRegistry();
    const applier = createKillApplier({
      store,
      executions,
      upstream: client,
      logger: pino({ level: 'silent' }),
    });
    const agentId = asAgentId('t-agent');
    await forward('t/t-agent/files', 'echo');
    await forward('t/other-agent/files', 'echo');
    expect(upstream.sessionsCreated).toBe(2);

    const running = executions.begin(agentId);
    const blocked = forward('t/t-agent/files', 'block', running.signal);
    await upstream.waitForCalls('block', 1);
    expect(applier.apply(delta)).toEqual({ applied: true, aborted: 1 });
    await expect(blocked).rejects.toMatchObject({ code: 'MCP_UPSTREAM_ABORTED' });
    running.end();
    await upstream.waitForClosedByClient(1);
    expect(store.current?.tenants.get('t')?.agents.get('t-agent')?.killed).toBe(true);

    // Started after the kill: aborted before it leaves.
    const late = executions.begin(agentId);
    expect(late.signal.aborted).toBe(true);
    await expect(forward('t/t-agent/files', 'echo', late.signal)).rejects.toMatchObject({
      code: 'MCP_UPSTREAM_ABORTED',
    });
    late.end();

    // The agent's session is forgotten (a new one opens); another agent's is kept.
    await forward('t/t-agent/files', 'echo');
    expect(upstream.sessionsCreated).toBe(3);
    await forward('t/other-agent/files', 'echo');
    expect(upstream.sessionsCreated).toBe(3);

    // A repeat applies nothing and aborts nothing more; it reports what the kill aborted here in
    // all (each path reports the total; the receiver merges by data plane).
    expect(applier.apply(delta)).toEqual({ applied: false, aborted: 1 });
  });
});
