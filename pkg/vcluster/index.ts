// Connecting a virtual cluster to the platform with an access key: its settings,
// the key lookup, the role check, the connection secret and the RBAC to read it.

export * from './settings.js';
export * from './connection-secret.js';
export * from './host.js';
export * from './rbac.js';
export * from './lookup.js';
export * from './role-check.js';
export * from './check.js';
export { KubeConnectionHost } from './host-kube.js';
