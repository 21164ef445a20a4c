// An in-memory ConnectionHost for unit tests: secrets, roles and role bindings by
// namespace/name, with a switch to make chosen secrets forbidden (403) as a host
// with tight RBAC would.

import type { SecretObject } from '../connection-secret.js';
import type { ApplyResult, ConnectionHost } from '../host.js';
import { HostForbiddenError } from '../host.js';
import type { RoleBindingObject, RoleObject } from '../rbac.js';

export class MemoryConnectionHost implements ConnectionHost {
  readonly secrets = new Map<string, SecretObject>();
  readonly roles = new Map<string, RoleObject>();
  readonly roleBindings = new Map<string, RoleBindingObject>();
  /** `namespace/name` of secrets a read of which is refused with 403. */
  readonly forbidden = new Set<string>();
  /** Every secret read, in order, as `namespace/name`. */
  readonly reads: string[] = [];

  /** Stores a secret from plain string values (as `kubectl create secret --from-literal` would). */
  putSecret(namespace: string, name: string, values: Record<string, string>): void {
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(values)) data[k] = Buffer.from(v, 'utf8').toString('base64');
    this.secrets.set(`${namespace}/${name}`, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name, namespace },
      data,
    });
  }

  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const id = `${namespace}/${name}`;
    this.reads.push(id);
    if (this.forbidden.has(id)) {
      return Promise.reject(new HostForbiddenError(`secrets "${name}" is forbidden`));
    }
    const secret = this.secrets.get(id);
    if (!secret) return Promise.resolve(undefined);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(secret.data)) out[k] = Buffer.from(v, 'base64').toString('utf8');
    return Promise.resolve(out);
  }

  applySecret(secret: SecretObject): Promise<ApplyResult> {
    return Promise.resolve(put(this.secrets, secret));
  }

  applyRole(role: RoleObject): Promise<ApplyResult> {
    return Promise.resolve(put(this.roles, role));
  }

  applyRoleBinding(binding: RoleBindingObject): Promise<ApplyResult> {
    return Promise.resolve(put(this.roleBindings, binding));
  }
}

function put<T extends { metadata: { namespace: string; name: string } }>(
  map: Map<string, T>,
  obj: T,
): ApplyResult {
  const id = `${obj.metadata.namespace}/${obj.metadata.name}`;
  const existed = map.has(id);
  map.set(id, structuredClone(obj));
  return existed ? 'updated' : 'created';
}
