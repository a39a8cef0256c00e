// The tenant's gateway policy (spec §1.7, §2.5): validated field by field, so an operator learns
// every wrong field at once, then stored whole and published with the next snapshot.
import { gatewayError } from '../../shared/errors/index.js';
import { parsePolicyUri } from '../../shared/npl/index.js';
import {
  EXECUTION_MODES,
  type ExecutionMode,
  type GatewayPolicyConfig,
  OAUTH_MODES,
} from '../../shared/snapshot/index.js';
import { TOOL_PINNING_MODES } from '../../shared/tools/tool-pins.js';
import { bumpConfigVersion } from '../../storage/config-version.js';
import type { Database } from '../../storage/database.js';

export type GatewayPolicyPatch = Partial<GatewayPolicyConfig>;

export interface FieldIssue {
  readonly field: string;
  readonly message: string;
}

const NAME_LIST_LIMIT = 1000;

/** Every problem of a patch, or an empty list. */
export function validateGatewayPolicyPatch(patch: GatewayPolicyPatch): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const names = (field: keyof GatewayPolicyConfig, pattern?: RegExp) => {
    const value = patch[field];
    if (value === undefined) return;
    if (!Array.isArray(value) || value.length > NAME_LIST_LIMIT) {
      issues.push({ field, message: `must be a list of at most ${NAME_LIST_LIMIT} strings` });
      return;
    }
    value.forEach((item, index) => {
      if (typeof item !== 'string' || item === '' || item.length > 256) {
        issues.push({
          field: `${field}[${index}]`,
          message: 'must be a string of 1-256 characters',
        });
      } else if (pattern && !pattern.test(item)) {
        issues.push({ field: `${field}[${index}]`, message: `"${item}" is not valid here` });
      }
    });
  };
  names('trustedServers');
  names('blockedMethods');
  names('blockedTools');
  names('destructiveToolPatterns');
  names('exfilAllowedDomains', /^[A-Za-z0-9.*:[\]-]+$/);
  for (const field of [
    'denyDestructive',
    'exfilDetectSecrets',
    'exfilCheckDestinations',
    'requireAgentIdentity',
    'proxyModeHeader',
  ] as const) {
    if (patch[field] !== undefined && typeof patch[field] !== 'boolean') {
      issues.push({ field, message: 'must be true or false' });
    }
  }
  const limit = patch.exfilBulkExportLimit;
  if (limit !== undefined && limit !== null && (!Number.isInteger(limit) || limit < 1)) {
    issues.push({
      field: 'exfilBulkExportLimit',
      message: 'must be a positive integer or null (off)',
    });
  }
  if (
    patch.oauthMode !== undefined &&
    !(OAUTH_MODES as readonly string[]).includes(patch.oauthMode)
  ) {
    issues.push({ field: 'oauthMode', message: `must be one of ${OAUTH_MODES.join(', ')}` });
  }
  const depth = patch.maxDelegationDepth;
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 0 || depth > 16)) {
    issues.push({ field: 'maxDelegationDepth', message: 'must be an integer from 0 to 16' });
  }
  const ttl = patch.approvalTtlSeconds;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 10 || ttl > 7 * 24 * 3600)) {
    issues.push({ field: 'approvalTtlSeconds', message: 'must be an integer from 10 to 604800' });
  }
  const wait = patch.approvalWaitSeconds;
  if (wait !== undefined && (!Number.isInteger(wait) || wait < 0 || wait > 3600)) {
    issues.push({ field: 'approvalWaitSeconds', message: 'must be an integer from 0 to 3600' });
  }
  if (
    patch.toolPinning !== undefined &&
    !(TOOL_PINNING_MODES as readonly string[]).includes(patch.toolPinning)
  ) {
    issues.push({
      field: 'toolPinning',
      message: `must be one of ${TOOL_PINNING_MODES.join(', ')}`,
    });
  }
  if (
    patch.proxyExecutionMode !== undefined &&
    !(EXECUTION_MODES as readonly string[]).includes(patch.proxyExecutionMode)
  ) {
    issues.push({
      field: 'proxyExecutionMode',
      message: `must be one of ${EXECUTION_MODES.join(', ')}`,
    });
  }
  if (patch.allowedModes !== undefined) {
    if (!Array.isArray(patch.allowedModes)) {
      issues.push({ field: 'allowedModes', message: 'must be a list of modes' });
    } else {
      patch.allowedModes.forEach((mode, index) => {
        if (!(EXECUTION_MODES as readonly string[]).includes(mode)) {
          issues.push({
            field: `allowedModes[${index}]`,
            message: `must be one of ${EXECUTION_MODES.join(', ')}`,
          });
        }
      });
    }
  }
  if (patch.pinnedPolicies !== undefined) {
    if (!Array.isArray(patch.pinnedPolicies)) {
      issues.push({ field: 'pinnedPolicies', message: 'must be a list of svc://name@version' });
    } else {
      patch.pinnedPolicies.forEach((uri, index) => {
        try {
          parsePolicyUri(uri);
        } catch (error) {
          issues.push({ field: `pinnedPolicies[${index}]`, message: (error as Error).message });
        }
      });
    }
  }
  return issues;
}

export async function updateGatewayPolicy(
  db: Database,
  tenantId: string,
  patch: GatewayPolicyPatch,
  updatedBy: string,
): Promise<void> {
  const issues = validateGatewayPolicyPatch(patch);
  if (issues.length > 0) {
    throw gatewayError(
      'REQUEST_INVALID',
      { problem: issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ') },
      { details: { issues } },
    );
  }
  const data = {
    ...patch,
    allowedModes: patch.allowedModes as ExecutionMode[] | undefined,
    updatedBy,
  };
  await db.prisma.$transaction([
    db.prisma.gatewayPolicy.update({
      where: { tenantId },
      data: Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)),
    }),
    bumpConfigVersion(db.prisma, tenantId),
  ]);
}
