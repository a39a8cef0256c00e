// The secret scan both planes use: the data plane's exfiltration detector finds secrets in call
// arguments, the control plane masks them in the arguments it shows. Every public name is here.

export { DEFAULT_INSPECTION_LIMITS, type InspectionLimits } from './limits.js';
export { maskSecrets, maskSecretsInString } from './mask-secrets.js';
export { findSecret, type SecretSpanVisitor, scanSecretSpans } from './secrets.js';
export type { Finding } from './types.js';
