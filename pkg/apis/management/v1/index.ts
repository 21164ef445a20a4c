// The management API group's types. The list of its kinds is the registry's
// (pkg/registry/management/kinds.ts), where each kind's strategy and traits are too:
// one list, so a new kind cannot be served without being published, or the reverse.

export type { ManagementKind } from './common.js';
export { VERSION } from './common.js';
