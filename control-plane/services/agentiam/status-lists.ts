// The tenant's revocation status lists (W3C Bitstring Status List): each identity credential
// holds one entry, allocated in order; a list has STATUS_LIST_SIZE entries and a tenant gets a new
// list when its current one is full. Every list carries, in StatusList.credential, its signed
// BitstringStatusListCredential of the current version: the data planes serve it as it is (from
// the snapshot) at `<publicUrl>/api/v1/agentiam/status-lists/<id>`. Setting a bit makes a new
// version: the bitstring changes, the credential is signed again, and the tenant's
// configVersion is bumped so the publisher pushes it — except for the kill switch's bits
// (`setRevocationBits`), which travel as a kill delta instead of a rebuilt snapshot. StatusList.bitstring holds the GZIP bytes
// of the bitstring (the encodedList without its `u` and base64url). Every function taking a
// transaction expects the caller to hold the tenant lock (signing-keys.ts).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../../prisma/generated/client/client.js';
import {
  STATUS_PURPOSE,
  statusListCredentialDocument,
} from '../../../shared/agentiam/credentials.js';
import {
  decodeStatusList,
  encodeStatusList,
  isBitSet,
  STATUS_LIST_SIZE,
  setBit,
} from '../../../shared/agentiam/status-list.js';
import type { PublicUrl } from '../../../shared/public-url.js';
import type { StatusListConfig } from '../../../shared/snapshot/index.js';
import { bumpConfigVersion } from '../../../storage/tables/config-version.js';
import type { CaSigner, Transaction } from './signing-keys.js';

/** The absolute URL of a status list: its credential's id and every entry's statusListCredential. */
export function statusListUrl(publicUrl: PublicUrl, statusListId: string): string {
  return `${publicUrl.get()}/api/v1/agentiam/status-lists/${statusListId}`;
}

export interface StatusEntry {
  readonly statusListId: string;
  readonly statusListUrl: string;
  readonly statusListIndex: number;
  /** Whether a new list was made (the snapshot changed: the caller publishes). */
  readonly listCreated: boolean;
}

/** The next free entry of the tenant's revocation lists, making a new signed list when full. */
export async function allocateStatusEntry(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  now: Date,
): Promise<StatusEntry> {
  const { tenantId } = signer;
  const open = await tx.statusList.findFirst({
    where: { tenantId, purpose: STATUS_PURPOSE, nextIndex: { lt: STATUS_LIST_SIZE } },
    orderBy: { nextIndex: 'desc' },
    select: { id: true, nextIndex: true },
  });
  const list = open ?? (await createStatusList(tx, signer, publicUrl, now));
  await tx.statusList.update({
    where: { id: list.id },
    data: { nextIndex: list.nextIndex + 1 },
  });
  return {
    statusListId: list.id,
    statusListUrl: statusListUrl(publicUrl, list.id),
    statusListIndex: list.nextIndex,
    listCreated: open === null,
  };
}

async function createStatusList(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  now: Date,
): Promise<{ id: string; nextIndex: number }> {
  const id = randomUUID();
  const encodedList = encodeStatusList(new Uint8Array(STATUS_LIST_SIZE / 8));
  const credential = await signStatusList(signer, statusListUrl(publicUrl, id), encodedList, now);
  await tx.statusList.create({
    data: {
      id,
      tenantId: signer.tenantId,
      purpose: STATUS_PURPOSE,
      size: STATUS_LIST_SIZE,
      bitstring: gzipBytesOf(encodedList),
      nextIndex: 0,
      version: 1,
      credential: credential as Prisma.InputJsonObject,
    },
  });
  await bumpConfigVersion(tx, signer.tenantId);
  return { id, nextIndex: 0 };
}

/**
 * Sets the revocation bit of one entry: a new version of its list, signed by `signer`. False
 * when the bit was already set (nothing changes).
 */
export async function setRevocationBit(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  statusListId: string,
  index: number,
  now: Date,
): Promise<boolean> {
  const list = await tx.statusList.findUniqueOrThrow({
    where: { id: statusListId },
    select: { id: true, bitstring: true, version: true },
  });
  const bits = decodeStatusList(encodedListOf(list.bitstring));
  if (isBitSet(bits, index)) return false;
  setBit(bits, index);
  await storeVersion(tx, signer, publicUrl, list, encodeStatusList(bits), now);
  return true;
}

/**
 * The kill switch's revocation (control-plane/kill/fan-out.ts): sets the bits of several entries
 * and signs each touched list once, WITHOUT bumping configVersion — the lists reach the data
 * planes in the kill delta, and a full snapshot carries them whenever one is next built. Returns
 * each list whose bits changed, as its new signed version.
 */
export async function setRevocationBits(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  entries: readonly { readonly statusListId: string; readonly statusListIndex: number }[],
  now: Date,
): Promise<StatusListConfig[]> {
  const byList = new Map<string, number[]>();
  for (const entry of entries) {
    const indexes = byList.get(entry.statusListId);
    if (indexes) indexes.push(entry.statusListIndex);
    else byList.set(entry.statusListId, [entry.statusListIndex]);
  }
  const touched: StatusListConfig[] = [];
  for (const [statusListId, indexes] of [...byList].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const list = await tx.statusList.findFirst({
      where: { id: statusListId, tenantId: signer.tenantId },
      select: { id: true, bitstring: true, version: true },
    });
    if (!list) continue;
    const bits = decodeStatusList(encodedListOf(list.bitstring));
    let changed = false;
    for (const index of indexes) {
      if (isBitSet(bits, index)) continue;
      setBit(bits, index);
      changed = true;
    }
    if (!changed) continue;
    const credential = await storeVersion(
      tx,
      signer,
      publicUrl,
      list,
      encodeStatusList(bits),
      now,
      {
        bumpConfigVersion: false,
      },
    );
    touched.push({ id: list.id, version: list.version + 1, credential });
  }
  return touched;
}

/** Signs every list of the tenant again (after a rotation): a new version each, same bits. */
export async function resignStatusLists(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  now: Date,
): Promise<number> {
  const lists = await tx.statusList.findMany({
    where: { tenantId: signer.tenantId, purpose: STATUS_PURPOSE },
    select: { id: true, bitstring: true, version: true },
    orderBy: { id: 'asc' },
  });
  for (const list of lists) {
    await storeVersion(tx, signer, publicUrl, list, encodedListOf(list.bitstring), now);
  }
  return lists.length;
}

/** Stores and signs the next version of a list; returns the signed credential. */
async function storeVersion(
  tx: Transaction,
  signer: CaSigner,
  publicUrl: PublicUrl,
  list: { id: string; version: number },
  encodedList: string,
  now: Date,
  options: { readonly bumpConfigVersion: boolean } = { bumpConfigVersion: true },
): Promise<Record<string, unknown>> {
  const credential = await signStatusList(
    signer,
    statusListUrl(publicUrl, list.id),
    encodedList,
    now,
  );
  await tx.statusList.update({
    where: { id: list.id },
    data: {
      bitstring: gzipBytesOf(encodedList),
      version: list.version + 1,
      credential: credential as Prisma.InputJsonObject,
    },
  });
  if (options.bumpConfigVersion) await bumpConfigVersion(tx, signer.tenantId);
  return credential;
}

function signStatusList(
  signer: CaSigner,
  url: string,
  encodedList: string,
  issuedAt: Date,
): Promise<Record<string, unknown>> {
  return signer.sign(
    statusListCredentialDocument({ url, tenantId: signer.tenantId, issuedAt, encodedList }),
  );
}

function gzipBytesOf(encodedList: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(encodedList.slice(1), 'base64url'));
}

function encodedListOf(bitstring: Uint8Array): string {
  return `u${Buffer.from(bitstring).toString('base64url')}`;
}
