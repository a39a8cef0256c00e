import { describe, expect, it } from 'vitest';
import {
  BUNDLED_POLICIES,
  canonicalJson,
  contentHash,
  createBundledRegistry,
  evaluatePolicy,
  formatPolicyUri,
  InMemoryNplRegistry,
  loadPinnedPolicies,
  loadPinnedPolicy,
  type NplRegistry,
  parsePolicyUri,
} from '../../../shared/npl/index.js';

const doc = (condition: string, version = '1.0.0') => ({
  version,
  policyName: 'payments-guard',
  targetAgents: ['*'],
  rules: [{ ruleId: 'r1', action: 'BLOCK', condition, alertSeverity: 'CRITICAL' }],
});

describe('policy URIs', () => {
  it('parses and formats svc://<name>@<major.minor.patch>', () => {
    expect(parsePolicyUri('svc://nato-prou-strict-financial@1.0.0')).toEqual({
      name: 'nato-prou-strict-financial',
      version: '1.0.0',
    });
    expect(formatPolicyUri({ name: 'a-b', version: '10.2.3' })).toBe('svc://a-b@10.2.3');
  });

  it('rejects unpinned and malformed URIs with NPL_INVALID_URI', () => {
    for (const uri of [
      'svc://nato-prou-strict-financial',
      'svc://nato@1.0',
      'svc://nato@latest',
      'hardalion://nato@1.0.0',
      'svc://Nato@1.0.0',
      ' svc://nato@1.0.0',
      'svc://nato@1.0.0/publisher/x',
      'svc://nato@01.0.0',
    ]) {
      expect(() => parsePolicyUri(uri), uri).toThrowError(
        expect.objectContaining({ code: 'NPL_INVALID_URI' }),
      );
    }
    expect(() => parsePolicyUri('svc://nato')).toThrowError(/not pinned/);
  });
});

describe('content hashes', () => {
  it('are SHA-256 of canonical JSON: keys sorted recursively, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
    // sha256('{}') — a published test vector.
    expect(contentHash({})).toBe(
      '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
    );
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
  });
});

describe('the in-memory registry', () => {
  it('publishes, resolves and lists policies by name and version', async () => {
    const registry: NplRegistry = new InMemoryNplRegistry();
    const { entry, created } = await registry.publish(doc("tool.name == 'pay'"));
    expect(created).toBe(true);
    expect(entry).toMatchObject({
      name: 'payments-guard',
      version: '1.0.0',
      uri: 'svc://payments-guard@1.0.0',
    });
    expect(entry.contentHash).toBe(contentHash(entry.policy));
    await registry.publish(doc("tool.name == 'pay2'", '1.10.0'));
    await registry.publish(doc("tool.name == 'pay3'", '1.2.0'));
    expect((await registry.list('payments-guard')).map((e) => e.version)).toEqual([
      '1.0.0',
      '1.2.0',
      '1.10.0',
    ]);
    expect((await registry.resolve('svc://payments-guard@1.2.0')).policy.rules[0]?.condition).toBe(
      "tool.name == 'pay3'",
    );
  });

  it('treats publishing identical content again as a no-op', async () => {
    const registry = new InMemoryNplRegistry();
    const first = await registry.publish(doc('true'));
    const again = await registry.publish(JSON.stringify(doc('true')));
    expect(again.created).toBe(false);
    expect(again.entry).toBe(first.entry);
  });

  it('refuses different content under a published name@version', async () => {
    const registry = new InMemoryNplRegistry();
    await registry.publish(doc('true'));
    await expect(registry.publish(doc('false'))).rejects.toMatchObject({
      code: 'NPL_REGISTRY_IMMUTABLE',
    });
    expect((await registry.resolve('svc://payments-guard@1.0.0')).policy.rules[0]?.condition).toBe(
      'true',
    );
  });

  it('refuses invalid documents and reports unknown pins', async () => {
    const registry = new InMemoryNplRegistry();
    await expect(registry.publish(doc('nope =='))).rejects.toMatchObject({
      code: 'NPL_INVALID_DOCUMENT',
    });
    await expect(registry.resolve('svc://payments-guard@9.9.9')).rejects.toMatchObject({
      code: 'NPL_REGISTRY_NOT_FOUND',
    });
    await expect(registry.resolve('svc://payments-guard')).rejects.toMatchObject({
      code: 'NPL_INVALID_URI',
    });
  });

  it('publishes a policy with an always-false comparison, returns its warning and evaluates it to false', async () => {
    const registry = new InMemoryNplRegistry();
    const first = await registry.publish(doc("args.amount >= 'many'"));
    expect(first.created).toBe(true);
    expect(first.warnings).toMatchObject([
      { code: 'always_false', path: ['rules', 0, 'condition'], ruleIndex: 0, line: 1, column: 16 },
    ]);
    const again = await registry.publish(doc("args.amount >= 'many'"));
    expect(again).toMatchObject({ created: false, warnings: first.warnings });
    expect((await registry.publish(doc('true', '2.0.0'))).warnings).toEqual([]);
    const compiled = await loadPinnedPolicy(registry, 'svc://payments-guard@1.0.0');
    for (const amount of [1e9, 'many', 'more', undefined]) {
      const decision = evaluatePolicy(compiled, { tool: { name: 'pay' }, args: { amount } });
      expect(decision).toMatchObject({ action: 'ALLOW', ruleId: 'npl_default_allow' });
    }
  });

  it('bundles nato-prou-strict-financial@1.0.0 and eu-ai-act-art5-prohibited@1.0.0', async () => {
    const registry = createBundledRegistry();
    expect((await registry.list()).map((e) => e.uri)).toEqual([
      'svc://eu-ai-act-art5-prohibited@1.0.0',
      'svc://nato-prou-strict-financial@1.0.0',
    ]);
    expect(BUNDLED_POLICIES).toHaveLength(2);
  });
});

describe('pinned policies fail closed', () => {
  const failClosed = {
    action: 'BLOCK',
    ruleId: 'NPL_REGISTRY_FAIL_CLOSED',
    alertSeverity: 'CRITICAL',
    matched: true,
  };

  it('resolves a bundled pin to a working policy', async () => {
    const policy = await loadPinnedPolicy(
      createBundledRegistry(),
      'svc://nato-prou-strict-financial@1.0.0',
    );
    expect(evaluatePolicy(policy, { tool: { name: 'drop_table' } }).ruleId).toBe(
      'block_destructive_data_tools',
    );
    expect(evaluatePolicy(policy, { tool: { name: 'read' } }).action).toBe('ALLOW');
  });

  it('blocks everything when the pin is unknown, unpinned or malformed', async () => {
    const registry = createBundledRegistry();
    const policies = await loadPinnedPolicies(registry, [
      'svc://nato-prou-strict-financial@9.0.0',
      'svc://nato-prou-strict-financial',
      'not a uri',
    ]);
    for (const policy of policies) {
      expect(evaluatePolicy(policy, { tool: { name: 'read' }, agentRole: 'anyone' })).toMatchObject(
        failClosed,
      );
    }
  });

  it('blocks when the registry itself fails or returns tampered content', async () => {
    const real = createBundledRegistry();
    const broken: NplRegistry = {
      resolve: () => Promise.reject(new Error('connection refused')),
      publish: (s) => real.publish(s),
      list: (n) => real.list(n),
    };
    const uri = 'svc://nato-prou-strict-financial@1.0.0';
    const down = await loadPinnedPolicy(broken, uri);
    expect(evaluatePolicy(down, {})).toMatchObject(failClosed);
    expect(evaluatePolicy(down, {}).reason).toContain('connection refused');

    const entry = await real.resolve(uri);
    const tampered: NplRegistry = {
      ...broken,
      resolve: async () => ({ ...entry, policy: { ...entry.policy, targetAgents: ['nobody'] } }),
    };
    expect(evaluatePolicy(await loadPinnedPolicy(tampered, uri), {})).toMatchObject(failClosed);
    const wrongVersion: NplRegistry = {
      ...broken,
      resolve: async () => real.resolve('svc://eu-ai-act-art5-prohibited@1.0.0'),
    };
    expect(evaluatePolicy(await loadPinnedPolicy(wrongVersion, uri), {})).toMatchObject(failClosed);
  });
});
