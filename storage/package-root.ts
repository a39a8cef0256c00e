// Moved to shared/package-root.ts (shared code needs it too); this re-export keeps
// runtime/print-openapi.ts working until it imports the shared module directly.
export { findPackageRoot } from '../shared/package-root.js';
