// What the connection library needs from the host cluster: read a secret, and
// create-or-replace a secret, a Role and a RoleBinding. Narrow on purpose, so the
// lookup and the commands are tested against an in-memory host, and the real one
// (host-kube.ts, through @kubernetes/client-node) is one small adapter.

import type { SecretObject } from './connection-secret.js';
import type { RoleBindingObject, RoleObject } from './rbac.js';

export type ApplyResult = 'created' | 'updated';

/** The host refused (403): the caller's host credentials may not read or write this object. */
export class HostForbiddenError extends Error {
  override readonly name = 'HostForbiddenError';
}

/** The host cluster could not be reached or answered with something other than 403/404. */
export class HostError extends Error {
  override readonly name = 'HostError';
}

export interface ConnectionHost {
  /** The secret's data, base64-decoded to UTF-8 strings; undefined when there is no such secret. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  applySecret(secret: SecretObject): Promise<ApplyResult>;
  applyRole(role: RoleObject): Promise<ApplyResult>;
  applyRoleBinding(binding: RoleBindingObject): Promise<ApplyResult>;
}
