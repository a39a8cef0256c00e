export * from './check-consistency.js';
export * from './types.js';
