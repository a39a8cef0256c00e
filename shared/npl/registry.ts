// The policy registry: immutable, version-pinned NPL documents addressed by svc:// URIs.
// `NplRegistry` is async so that a database-backed implementation (control plane, Prisma) can
// implement it; `InMemoryNplRegistry` is the reference implementation and backs the bundled
// policies. `loadPinnedPolicy` is how enforcement gets a policy: it never rejects — any failure
// to resolve a pin (malformed URI, unknown pin, mismatched or tampered entry, invalid document,
// registry error) yields the fail-closed policy.

import { contentHash } from '../json/canonical-json.js';
import { BUNDLED_POLICIES } from './bundled.js';
import { parsePolicy, safeParsePolicy } from './document.js';
import { NplError, type NplIssue } from './errors.js';
import { buildFailClosedPolicy, type CompiledPolicy, compilePolicy } from './evaluate.js';
import type { NplPolicy } from './types.js';
import { formatPolicyUri, parsePolicyUri } from './uri.js';

export interface NplRegistryEntry {
  readonly name: string;
  readonly version: string;
  readonly uri: string;
  /** SHA-256 hex of the canonical JSON of `policy`. */
  readonly contentHash: string;
  readonly policy: NplPolicy;
}

export interface NplPublishResult {
  readonly entry: NplRegistryEntry;
  /** `false` when the same content was already published under that name and version. */
  readonly created: boolean;
  /** Findings that do not prevent publishing (e.g. `always_false`), with their positions. */
  readonly warnings: readonly NplIssue[];
}

export interface NplRegistry {
  /** The entry pinned by `uri`; rejects with NPL_INVALID_URI or NPL_REGISTRY_NOT_FOUND. */
  resolve(uri: string): Promise<NplRegistryEntry>;
  /**
   * Publishes a document (text or object). Republishing identical content is a no-op; other
   * content under a published name@version rejects with NPL_REGISTRY_IMMUTABLE.
   */
  publish(source: string | object): Promise<NplPublishResult>;
  /** Entries, optionally of one policy name, ordered by name then version. */
  list(name?: string): Promise<readonly NplRegistryEntry[]>;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export interface InMemoryNplRegistryOptions {
  /** Documents published when the registry is created (e.g. BUNDLED_POLICIES). */
  readonly policies?: readonly (string | object)[];
}

export class InMemoryNplRegistry implements NplRegistry {
  private readonly entries = new Map<string, NplRegistryEntry>();

  constructor(options: InMemoryNplRegistryOptions = {}) {
    for (const policy of options.policies ?? []) this.publishNow(policy);
  }

  resolve(uri: string): Promise<NplRegistryEntry> {
    try {
      return Promise.resolve(this.resolveNow(uri));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  publish(source: string | object): Promise<NplPublishResult> {
    try {
      return Promise.resolve(this.publishNow(source));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  list(name?: string): Promise<readonly NplRegistryEntry[]> {
    const all = [...this.entries.values()].filter((e) => name === undefined || e.name === name);
    all.sort((a, b) =>
      a.name === b.name ? compareVersions(a.version, b.version) : a.name < b.name ? -1 : 1,
    );
    return Promise.resolve(all);
  }

  /** Synchronous resolve, for callers that know they hold an in-memory registry. */
  resolveNow(uri: string): NplRegistryEntry {
    const { name, version } = parsePolicyUri(uri);
    const entry = this.entries.get(`${name}@${version}`);
    if (!entry) {
      throw new NplError('NPL_REGISTRY_NOT_FOUND', [
        {
          code: 'invalid_uri',
          message: `no policy is published as ${uri}`,
          path: [],
          hint: 'list the published versions with the registry',
        },
      ]);
    }
    return entry;
  }

  /** Synchronous publish (see NplRegistry.publish). */
  publishNow(source: string | object): NplPublishResult {
    const parsed = safeParsePolicy(source);
    if (!parsed.success) throw parsed.error;
    const { policy, warnings } = parsed;
    compilePolicy(policy);
    const name = policy.policyName;
    const version = policy.version;
    const key = `${name}@${version}`;
    const hash = contentHash(policy);
    const existing = this.entries.get(key);
    if (existing) {
      if (existing.contentHash === hash) return { entry: existing, created: false, warnings };
      throw new NplError('NPL_REGISTRY_IMMUTABLE', [
        {
          code: 'invalid_value',
          message: `${key} is already published with different content (${existing.contentHash.slice(0, 12)}…)`,
          path: ['version'],
          hint: 'published versions never change; publish a new version instead',
        },
      ]);
    }
    const entry: NplRegistryEntry = Object.freeze({
      name,
      version,
      uri: formatPolicyUri({ name, version }),
      contentHash: hash,
      policy,
    });
    this.entries.set(key, entry);
    return { entry, created: true, warnings };
  }
}

/** A fresh in-memory registry holding the bundled reference policies. */
export function createBundledRegistry(): InMemoryNplRegistry {
  return new InMemoryNplRegistry({ policies: BUNDLED_POLICIES });
}

function describe(error: unknown): string {
  if (error instanceof NplError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : 'registry error';
}

/**
 * Resolves and compiles a pinned policy. Never rejects: on any failure the result is the
 * fail-closed policy, whose every evaluation is BLOCK / NPL_REGISTRY_FAIL_CLOSED / CRITICAL.
 */
export async function loadPinnedPolicy(
  registry: NplRegistry,
  uri: string,
): Promise<CompiledPolicy> {
  try {
    const { name, version } = parsePolicyUri(uri);
    const entry = await registry.resolve(uri);
    const policy = parsePolicy(entry.policy);
    if (policy.policyName !== name || policy.version !== version) {
      return buildFailClosedPolicy(uri, `registry returned ${policy.policyName}@${policy.version}`);
    }
    if (contentHash(policy) !== entry.contentHash) {
      return buildFailClosedPolicy(uri, 'content hash mismatch');
    }
    return compilePolicy(policy);
  } catch (error) {
    return buildFailClosedPolicy(uri, describe(error));
  }
}

/** loadPinnedPolicy for each URI, in order. */
export function loadPinnedPolicies(
  registry: NplRegistry,
  uris: readonly string[],
): Promise<CompiledPolicy[]> {
  return Promise.all(uris.map((uri) => loadPinnedPolicy(registry, uri)));
}
