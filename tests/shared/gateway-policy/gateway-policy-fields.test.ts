// The gateway policy's one definition: the defaults a tenant starts with, every wrong field of a
// change reported by path with the message operators have always read, defaults filled in for a
// snapshot older than a field, and a database column of each field's name and type.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { GatewayPolicy } from '../../../prisma/generated/client/client.js';
import { DEFAULT_DESTRUCTIVE_TOOL_PATTERNS } from '../../../shared/gateway-policy/destructive-tool-patterns.js';
import {
  GATEWAY_POLICY_DEFAULTS,
  GATEWAY_POLICY_FIELD_NAMES,
  GATEWAY_POLICY_FIELDS,
  type GatewayPolicyField,
  type GatewayPolicyValues,
  gatewayPolicyPatchIssues,
  withGatewayPolicyDefaults,
} from '../../../shared/gateway-policy/gateway-policy-fields.js';

describe('gateway policy fields', () => {
  it('start a tenant closed: no trusted server, destructive calls denied, the built-in patterns', () => {
    expect(GATEWAY_POLICY_DEFAULTS).toEqual({
      trustedServers: [],
      blockedMethods: [],
      blockedTools: [],
      denyDestructive: true,
      destructiveToolPatterns: [...DEFAULT_DESTRUCTIVE_TOOL_PATTERNS],
      exfilDetectSecrets: true,
      exfilBulkExportLimit: 1000,
      exfilCheckDestinations: true,
      exfilAllowedDomains: [],
      oauthMode: 'none',
      maxDelegationDepth: 3,
      requireAgentIdentity: false,
      pinnedPolicies: [],
      allowedModes: ['production', 'simulation', 'shadow'],
      approvalTtlSeconds: 900,
      toolPinning: 'first_sight',
      approvalWaitSeconds: 120,
      proxyExecutionMode: 'production',
      proxyModeHeader: false,
      limits: [],
    });
    expect(Object.isFrozen(GATEWAY_POLICY_DEFAULTS.allowedModes)).toBe(true);
  });

  it('describe every field', () => {
    for (const field of GATEWAY_POLICY_FIELD_NAMES) {
      expect(GATEWAY_POLICY_FIELDS[field].description, field).toMatch(/^[A-Z].+\.$/);
    }
  });

  it('accept a valid change, null as the bulk-export limit (off) and an empty change', () => {
    expect(gatewayPolicyPatchIssues({})).toEqual([]);
    expect(
      gatewayPolicyPatchIssues({
        trustedServers: ['files'],
        exfilAllowedDomains: ['*.example.com', '[::1]:8443'],
        exfilBulkExportLimit: null,
        allowedModes: ['shadow'],
        pinnedPolicies: ['svc://team-rules@1.0.0'],
        maxDelegationDepth: 0,
        approvalTtlSeconds: 604_800,
        approvalWaitSeconds: 0,
        toolPinning: 'approved_only',
      }),
    ).toEqual([]);
  });

  it('report every wrong field of a change by path, with the message operators read', () => {
    const issues = gatewayPolicyPatchIssues({
      trustedServers: ['files', '', 'x'.repeat(257)],
      blockedTools: Array.from({ length: 1001 }, () => 'tool'),
      denyDestructive: 'yes',
      exfilBulkExportLimit: 0,
      exfilAllowedDomains: ['example.com', 'bad domain'],
      oauthMode: 'magic',
      maxDelegationDepth: 17,
      pinnedPolicies: ['svc://nope'],
      allowedModes: ['production', 'warp'],
      approvalTtlSeconds: 1.5,
      toolPinning: 'never',
      approvalWaitSeconds: 3601,
      proxyExecutionMode: 'warp',
      proxyModeHeader: null,
    });
    expect(issues).toEqual([
      { field: 'trustedServers[1]', message: 'must be a string of 1-256 characters' },
      { field: 'trustedServers[2]', message: 'must be a string of 1-256 characters' },
      { field: 'blockedTools', message: 'must be a list of at most 1000 strings' },
      { field: 'denyDestructive', message: 'must be true or false' },
      { field: 'exfilBulkExportLimit', message: 'must be a positive integer or null (off)' },
      { field: 'exfilAllowedDomains[1]', message: '"bad domain" is not valid here' },
      { field: 'oauthMode', message: 'must be one of none, mcp_as' },
      { field: 'maxDelegationDepth', message: 'must be an integer from 0 to 16' },
      {
        field: 'pinnedPolicies[0]',
        message: expect.stringContaining('not pinned to a version; expected svc://name@semver'),
      },
      { field: 'allowedModes[1]', message: 'must be one of production, simulation, shadow' },
      { field: 'approvalTtlSeconds', message: 'must be an integer from 10 to 604800' },
      { field: 'toolPinning', message: 'must be one of first_sight, approved_only' },
      { field: 'approvalWaitSeconds', message: 'must be an integer from 0 to 3600' },
      { field: 'proxyExecutionMode', message: 'must be one of production, simulation, shadow' },
      { field: 'proxyModeHeader', message: 'must be true or false' },
    ]);
    expect(gatewayPolicyPatchIssues({ allowedModes: 'production' })).toEqual([
      { field: 'allowedModes', message: 'must be a list of modes' },
    ]);
  });

  it('fill in the fields a snapshot older than them lacks, and keep null as a value', () => {
    const { toolPinning, approvalWaitSeconds, ...older } = {
      ...GATEWAY_POLICY_DEFAULTS,
      exfilBulkExportLimit: null,
      toolPinning: 'approved_only' as const,
      approvalWaitSeconds: 5,
    };
    expect(withGatewayPolicyDefaults(older)).toEqual({
      ...GATEWAY_POLICY_DEFAULTS,
      exfilBulkExportLimit: null,
    });
  });

  it('are the columns of the gateway_policies table, each holding its values', () => {
    type Columns = Omit<GatewayPolicy, 'tenantId' | 'updatedAt' | 'updatedBy'>;
    expectTypeOf<keyof Columns>().toEqualTypeOf<GatewayPolicyField>();
    // Enumerations are stored as text, lists as arrays.
    type Stored<T> = T extends readonly (infer Item)[] ? Item[] : T;
    expectTypeOf<{
      [F in GatewayPolicyField]: Stored<GatewayPolicyValues[F]>;
    }>().toExtend<Columns>();
  });
});
