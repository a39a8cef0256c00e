// The egress policy every outbound connection passes (DESIGN.md §12, docs/security.md "Egress").
export {
  canonicalAddress,
  formatIpAddress,
  formatIpRange,
  type IpAddress,
  type IpFamily,
  type IpRange,
  parseIpAddress,
  parseIpRange,
  rangeContains,
  rangeWithin,
} from './addresses.js';
export { type EgressRefusalStage, egressRefusalEntry, splitServerKey } from './audit.js';
export {
  checkEgress,
  type Egress,
  type EgressCheck,
  type EgressRefusal,
  type EgressResolver,
  egressHostOf,
  type ResolvedAddress,
} from './check.js';
export {
  DEFAULT_PRIVATE_RANGES,
  decideEgress,
  describeEgressPolicy,
  describeEgressRefusal,
  EGRESS_ALLOW_VARIABLE,
  EGRESS_DENY_VARIABLE,
  type EgressAllowRule,
  type EgressDecision,
  type EgressList,
  type EgressListProblem,
  type EgressPolicy,
  type EgressRefusalRule,
  EMPTY_EGRESS_POLICY,
  type HostPattern,
  isHostNameDenied,
  NEVER_RANGES,
  normalizeHostName,
  parseEgressList,
  RESERVED_RANGES,
} from './policy.js';
