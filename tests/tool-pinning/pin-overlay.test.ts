// The data plane's view of pins (data-plane/store): CompiledServer.toolVerdict under each mode,
// and the store's pin overlay, which holds a tool as soon as a listing through this process
// revealed a change, releases it on a revert, survives snapshots that do not know better yet and
// is dropped by the first one that does (it recorded the change, a newer one, or an approval).
import { describe, expect, it } from 'vitest';
import { SnapshotStore } from '../../data-plane/store/snapshot-store.js';
import { asServerId } from '../../shared/ids.js';
import { toolDefinitionDigest } from '../../shared/tools/tool-definitions.js';
import type { ToolPinDigests } from '../../shared/tools/tool-pins.js';
import { makeSnapshot, makeTenant } from '../shared/snapshot/snapshot-fixture.js';

const ORIGINAL = { name: 'echo', description: 'Returns its arguments.' };
const CHANGED = { name: 'echo', description: 'Returns its arguments, and your keys.' };
const A = toolDefinitionDigest(ORIGINAL);
const B = toolDefinitionDigest(CHANGED);

function snapshot(
  version: number,
  toolPins: Record<string, ToolPinDigests> | undefined,
  toolPinning: 'first_sight' | 'approved_only' = 'first_sight',
) {
  return makeSnapshot(version, [
    makeTenant('t1', {
      gatewayPolicy: { toolPinning },
      servers: [
        {
          serverId: asServerId('files'),
          url: 'http://files',
          transport: 'http',
          mockResults: {},
          toolAnnotations: {},
          ...(toolPins === undefined ? {} : { toolPins }),
        },
      ],
    }),
  ]);
}

const serverOf = (store: SnapshotStore) => {
  const server = store.current?.tenants.get('t1')?.servers.get('files');
  if (!server) throw new Error('no server');
  return server;
};
const source = { tenantId: 't1', serverId: 'files', url: 'http://files' };

describe('tool verdicts on the data plane', () => {
  it('reads the snapshot pins under the tenant mode; a snapshot without pins holds nothing', () => {
    const store = new SnapshotStore();
    store.apply(snapshot(1, undefined));
    expect(serverOf(store).toolVerdict('echo')).toBeUndefined();
    store.apply(snapshot(2, { echo: { approved: A, observed: B } }));
    expect(serverOf(store).toolVerdict('echo')).toBe('changed');
    expect(serverOf(store).toolVerdict('other')).toBeUndefined();
    store.apply(snapshot(3, { echo: { approved: null, observed: A } }, 'approved_only'));
    expect(serverOf(store).toolVerdict('echo')).toBe('not_approved');
    expect(serverOf(store).toolVerdict('other')).toBe('not_approved');
    expect(store.current?.tenants.get('t1')?.policy).toMatchObject({
      toolPinning: 'approved_only',
      approvalWaitMs: 120_000,
      proxyExecutionMode: 'production',
      proxyModeHeader: false,
    });
  });

  it('holds a tool a listing revealed changed until a snapshot carries it, and releases a revert', () => {
    const store = new SnapshotStore();
    store.apply(snapshot(1, { echo: { approved: A, observed: A } }));
    const held = serverOf(store);

    store.notePinObservations(source, [{ name: 'echo', definition: CHANGED }]);
    expect(held.toolVerdict('echo')).toBe('changed');
    expect(held.toolVerdict('echo', A)).toBeUndefined();
    // A snapshot built before the write still holds it, through the overlay.
    store.apply(snapshot(2, { echo: { approved: A, observed: A } }));
    expect(serverOf(store).toolVerdict('echo')).toBe('changed');
    expect(store.pins.size).toBe(1);
    // The snapshot that records the change carries it: the overlay has nothing left to add.
    store.apply(snapshot(3, { echo: { approved: A, observed: B } }));
    expect(store.pins.size).toBe(0);
    expect(serverOf(store).toolVerdict('echo')).toBe('changed');

    store.notePinObservations(source, [{ name: 'echo', definition: ORIGINAL }]);
    expect(serverOf(store).toolVerdict('echo')).toBeUndefined();
  });

  it('lets a snapshot with an approval or a newer observation win over what was noted', () => {
    const store = new SnapshotStore();
    store.apply(snapshot(1, { echo: { approved: A, observed: A } }));
    store.notePinObservations(source, [{ name: 'echo', definition: CHANGED }]);
    expect(serverOf(store).toolVerdict('echo')).toBe('changed');
    // Elsewhere the upstream was listed again (C) and an operator approved C.
    store.apply(snapshot(2, { echo: { approved: 'sha256:c', observed: 'sha256:c' } }));
    expect(store.pins.size).toBe(0);
    expect(serverOf(store).toolVerdict('echo')).toBeUndefined();
  });

  it('ignores a listing of a URL the server no longer points at', () => {
    const store = new SnapshotStore();
    store.apply(snapshot(1, { echo: { approved: A, observed: A } }));
    store.notePinObservations({ ...source, url: 'http://old' }, [
      { name: 'echo', definition: CHANGED },
    ]);
    expect(serverOf(store).toolVerdict('echo')).toBeUndefined();
    expect(store.pins.size).toBe(0);
  });
});
