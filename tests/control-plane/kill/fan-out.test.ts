// The control plane's kill fan-out on both databases: a kill committed while no fan-out ran (the
// receiver answered with only itself, controlPlaneReached false) is handled when a fan-out starts;
// the agent's status-list bits are set and each touched list re-signed once, without bumping the
// tenant's configVersion; the delta reaches the local store and every sink, a sink that confirms
// counts, one that fails does not stop the others; the propagation is recorded once and published.
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type KillConfirmation,
  KillFanOut,
  type KillSink,
} from '../../../control-plane/kill/fan-out.js';
import { KeyCustody } from '../../../control-plane/services/agentiam/custody.js';
import { KillSwitch } from '../../../data-plane/kill/kill-switch.js';
import { decodeStatusList, isBitSet } from '../../../shared/agentiam/status-list.js';
import type { AgentKillDelta } from '../../../shared/config-stream/protocol.js';
import { EVENT_TYPES } from '../../../shared/events/index.js';
import type { KillTarget } from '../../../storage/tables/agent-kills.js';
import { type KillScene, startKillScene, type Victim } from '../../data-plane/kill/kill-fixture.js';
import { describeEachDatabase } from '../../support/databases.js';
import { inspectBody } from '../../support/gateway.js';

describeEachDatabase('kill fan-out', (kind) => {
  let scene: KillScene;
  beforeAll(async () => {
    scene = await startKillScene(kind);
  });
  afterAll(async () => {
    await scene?.close();
  });

  it('handles a kill no fan-out propagated: bits re-signed once, no configVersion bump, sinks counted', async () => {
    const { gateway } = scene;
    const { runtime, db } = gateway;
    await runtime.killFanOut?.stop();
    const victim = await scene.addVictim();
    const { listId, index } = statusListEntryOf(victim);
    const listBefore = await db.prisma.statusList.findUniqueOrThrow({ where: { id: listId } });
    const tenantBefore = await db.prisma.tenant.findUniqueOrThrow({
      where: { id: scene.tenantId },
    });

    const { answer } = await killWithoutControlPlane(
      scene,
      { publicKey: victim.key.publicKeyMultibase },
      'no control plane',
    );
    expect(answer.propagation).toEqual({
      dataPlanes: 1,
      confirmed: 1,
      slowestMs: 0,
      confirmedBy: ['dp-lonely'],
      controlPlaneReached: false,
    });
    // Refused locally at once all the same.
    expect((await gateway.inspect(inspectBody(victim.id, { tool: 'echo' }))).status).toBe(403);
    const row = await db.prisma.agentKill.findUniqueOrThrow({ where: { agentId: victim.id } });
    expect(row.propagation).toBeNull();

    const delivered: AgentKillDelta[] = [];
    const confirming: KillSink = {
      async deliver(delta) {
        delivered.push(delta);
        const confirmation: KillConfirmation = { name: 'dp-a', ms: 3, aborted: 2 };
        return { dataPlanes: 2, confirmations: [confirmation] };
      },
    };
    const failing: KillSink = {
      deliver: () => Promise.reject(new Error('stream closed')),
    };
    const locally: AgentKillDelta[] = [];
    const fanOut = new KillFanOut({
      db,
      events: runtime.events,
      custody: runtime.keyCustody,
      publicUrl: runtime.publicUrl,
      logger: pino({ level: 'silent' }),
      applyLocally: (delta) => {
        locally.push(delta);
        return runtime.killApplier.apply(delta);
      },
      localName: 'local',
      ackWaitMs: 50,
    });
    fanOut.addSink(confirming);
    fanOut.addSink(failing);
    const propagated = await runUntilPropagated(fanOut, scene, row.id);

    const expected = {
      dataPlanes: 3,
      confirmed: 2,
      slowestMs: expect.any(Number),
      confirmedBy: ['local', 'dp-a'],
      abortedExecutions: 2,
      abortedBy: { local: 0, 'dp-a': 2 },
      controlPlaneReached: true,
    };
    expect(propagated).toMatchObject({ tenantId: scene.tenantId, propagation: expected });
    const after = await db.prisma.agentKill.findUniqueOrThrow({ where: { agentId: victim.id } });
    expect(after.propagation).toEqual(expected);

    // One delta, the same to the local store and the sink, with the re-signed list.
    expect(locally).toHaveLength(1);
    expect(delivered).toEqual(locally);
    expect(delivered[0]).toMatchObject({
      seq: Number(row.seq),
      killId: row.id,
      agentId: victim.id,
      publicKey: victim.key.publicKeyMultibase,
    });
    const lists = delivered[0]!.statusLists;
    expect(lists.map((list) => [list.id, list.version])).toEqual([
      [listId, listBefore.version + 1],
    ]);
    const encoded = (lists[0]!.credential.credentialSubject as { encodedList: string }).encodedList;
    expect(isBitSet(decodeStatusList(encoded), index)).toBe(true);

    const listAfter = await db.prisma.statusList.findUniqueOrThrow({ where: { id: listId } });
    expect(listAfter.version).toBe(listBefore.version + 1);
    expect(listAfter.credential).toEqual(lists[0]!.credential);
    const tenantAfter = await db.prisma.tenant.findUniqueOrThrow({ where: { id: scene.tenantId } });
    expect(tenantAfter.configVersion).toBe(tenantBefore.configVersion);
  });

  it('a control plane that cannot sign still fans the kill out: the delta carries the agent only', async () => {
    const { gateway } = scene;
    const { runtime, db } = gateway;
    await runtime.killFanOut?.stop();
    const victim = await scene.addVictim();
    const { listId } = statusListEntryOf(victim);
    const listBefore = await db.prisma.statusList.findUniqueOrThrow({ where: { id: listId } });
    const { answer } = await killWithoutControlPlane(
      scene,
      { agentId: victim.id },
      'no master key',
    );
    const delivered: AgentKillDelta[] = [];
    const fanOut = new KillFanOut({
      db,
      events: runtime.events,
      custody: new KeyCustody(),
      publicUrl: runtime.publicUrl,
      logger: pino({ level: 'silent' }),
      applyLocally: (delta) => {
        delivered.push(delta);
        return { aborted: 0 };
      },
    });
    const propagated = await runUntilPropagated(fanOut, scene, answer.killId);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ agentId: victim.id, statusLists: [] });
    // A control plane alone is no data plane: nothing confirmed, but it was reached.
    expect(propagated).toMatchObject({
      propagation: { dataPlanes: 0, confirmed: 0, slowestMs: null, controlPlaneReached: true },
    });
    const listAfter = await db.prisma.statusList.findUniqueOrThrow({ where: { id: listId } });
    expect(listAfter.version).toBe(listBefore.version);
  });
});

/** Where the victim's identity credential has its revocation bit. */
function statusListEntryOf(victim: Victim): { listId: string; index: number } {
  const status = victim.credential.credentialStatus as {
    statusListCredential: string;
    statusListIndex: string;
  };
  return {
    listId: status.statusListCredential.split('/').pop() as string,
    index: Number(status.statusListIndex),
  };
}

/** A kill through a data plane with no control plane listening: it answers with itself only. */
function killWithoutControlPlane(scene: KillScene, target: KillTarget, reason: string) {
  const { runtime, db } = scene.gateway;
  const receiver = new KillSwitch({
    db,
    audit: runtime.audit,
    events: runtime.events,
    applier: runtime.killApplier,
    processName: 'dp-lonely',
    propagationWaitMs: 50,
    logger: pino({ level: 'silent' }),
  });
  return receiver.kill({ tenantId: scene.tenantId, target, reason, actor: 'api_key:test' });
}

/** Starts the fan-out, and stops it once it has published the kill's propagation event. */
async function runUntilPropagated(fanOut: KillFanOut, scene: KillScene, killId: string) {
  const events = scene.gateway.runtime.events;
  const propagated = events.subscribe(
    (event) => event.type === EVENT_TYPES.AGENT_KILL_PROPAGATED && event.kill.id === killId,
  );
  await fanOut.start();
  const event = await propagated.next();
  await propagated.return?.();
  await fanOut.stop();
  return event.value;
}
