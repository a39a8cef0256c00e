// Compiles a tenant's AgentIAM public material (snapshot `identity`) into what the resolver and
// the verifier read per request: the tenant's DID document, one document per retired CA key in
// which that key answers as #agentiam-ca (the verifier's retry for credentials signed before a
// rotation, DESIGN.md §6), a fingerprint of the key set (part of the proof cache key), and the
// revocation status lists decoded once into bitsets, keyed by their URL — the `id` of the signed
// list credential, which is what an identity credential's `statusListCredential` names.
//
// A list is decoded once per content: the previous compiled state lends every list whose id,
// version and proof are unchanged (a re-signed list at the same version is decoded again). A
// list that cannot be decoded is left out rather than rejecting the tenant: credentials pointing
// at it then count as revoked (fail closed), while kills and other lists keep advancing.
import { createHash } from 'node:crypto';
import { tenantDid, tenantDidDocument } from '../../shared/agentiam/dids.js';
import { decodeStatusList } from '../../shared/agentiam/status-list.js';
import type { CaKeyConfig, TenantConfig } from '../../shared/snapshot/index.js';
import type { CompiledIdentity, CompiledRetiredKey, CompiledStatusList } from './compiled-types.js';

export function compileIdentity(
  config: TenantConfig,
  previous: CompiledIdentity | undefined,
): CompiledIdentity {
  const { caKeys, statusLists } = config.identity;
  const auditKeys = config.identity.auditKeys ?? [];
  const active = caKeys.find((key) => key.status === 'active');
  const retired: CompiledRetiredKey[] = [];
  for (const key of caKeys) {
    if (key.status !== 'retired') continue;
    const until = key.resolvableUntil === null ? Number.NaN : Date.parse(key.resolvableUntil);
    // A retired key without a (readable) window verifies nothing.
    if (!Number.isFinite(until)) continue;
    retired.push({
      key,
      resolvableUntilMs: until,
      asCurrentKeyDocument: Object.freeze(
        tenantDidDocument(config.id, [{ ...key, status: 'active' }]),
      ),
    });
  }
  const listed: CaKeyConfig[] = active ? [active] : [];
  for (const { key } of retired) listed.push(key);
  const lists = new Map<string, CompiledStatusList>();
  for (const list of statusLists) {
    const compiled = compileStatusList(list, previous);
    if (compiled) lists.set(compiled.url, compiled);
  }
  return {
    tenantId: config.id,
    did: tenantDid(config.id),
    didDocument:
      listed.length === 0 && auditKeys.length === 0
        ? null
        : Object.freeze(tenantDidDocument(config.id, listed, auditKeys)),
    verifierDocument: active ? Object.freeze(tenantDidDocument(config.id, [active])) : null,
    activeKey: active,
    retiredKeys: retired,
    auditKeys,
    didDocumentValidUntilMs: Math.min(...retired.map((r) => r.resolvableUntilMs)),
    keyEpoch: listed.map((key) => `${key.id}:${key.status}:${key.publicKeyMultibase}`).join(','),
    statusLists: lists,
  };
}

/**
 * The DID document as it stands at `nowMs`: the compiled one, or — once a retired key's window
 * has passed before the next snapshot — one without the keys whose window is over.
 */
export function didDocumentAt(
  identity: CompiledIdentity,
  nowMs: number,
): Readonly<Record<string, unknown>> | null {
  if (nowMs < identity.didDocumentValidUntilMs) return identity.didDocument;
  const keys: CaKeyConfig[] = identity.activeKey ? [identity.activeKey] : [];
  for (const retired of identity.retiredKeys) {
    if (retired.resolvableUntilMs > nowMs) keys.push(retired.key);
  }
  return keys.length === 0 && identity.auditKeys.length === 0
    ? null
    : tenantDidDocument(identity.tenantId, keys, identity.auditKeys);
}

/** One signed status list decoded; `previous` lends it when unchanged. Null when undecodable. */
export function compileStatusList(
  list: TenantConfig['identity']['statusLists'][number],
  previous: CompiledIdentity | undefined,
): CompiledStatusList | null {
  const credential = list.credential;
  const url = credential.id;
  if (typeof url !== 'string') return null;
  const proof = credential.proof as { proofValue?: unknown } | undefined;
  const contentKey = `${list.id}#${list.version}#${String(proof?.proofValue)}`;
  const prior = previous?.statusLists.get(url);
  if (prior && prior.contentKey === contentKey) return prior;
  const subject = credential.credentialSubject as { encodedList?: unknown } | undefined;
  let bits: Uint8Array;
  try {
    bits = decodeStatusList(subject?.encodedList as string);
  } catch {
    return null;
  }
  const body = Buffer.from(JSON.stringify(credential), 'utf8');
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return {
    id: list.id,
    url,
    version: list.version,
    bits,
    body,
    etag: `"v${list.version}-${digest}"`,
    contentKey,
  };
}
