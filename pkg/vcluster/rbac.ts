// With `createRBAC`, a virtual cluster whose connection secret lives in another
// namespace (the shared mode's `vc-platform`) gets a Role there that allows `get`
// on exactly that secret, bound to the virtual cluster's service account. Nothing
// is made when the secret is in the virtual cluster's own namespace: its service
// account can already read it, and a needless Role is one more thing to audit.
//
// Names are unique per virtual cluster: many virtual clusters share the secret, and
// each needs its own binding. Name and namespace are both in the object name, with
// a short hash of the pair so that truncation or dashes inside names (`a-b` in `c`
// versus `a` in `b-c`) can never make two virtual clusters collide.

import { createHash } from 'node:crypto';
import type { ApiKeySettings } from './settings.js';

export interface VirtualClusterRef {
  /** The virtual cluster's name (its release name on the host). */
  readonly name: string;
  /** The host namespace the virtual cluster runs in. */
  readonly namespace: string;
  /** Default `vc-<name>`, the service account a virtual cluster runs as. */
  readonly serviceAccount?: string | undefined;
}

export interface RoleObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'Role';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  rules: Array<{ apiGroups: string[]; resources: string[]; resourceNames: string[]; verbs: string[] }>;
}

export interface RoleBindingObject {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: 'RoleBinding';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  roleRef: { apiGroup: 'rbac.authorization.k8s.io'; kind: 'Role'; name: string };
  subjects: Array<{ kind: 'ServiceAccount'; name: string; namespace: string }>;
}

export interface ConnectionRbac {
  readonly role: RoleObject;
  readonly roleBinding: RoleBindingObject;
}

export const VIRTUAL_CLUSTER_NAME_LABEL = 'platform.dev/virtual-cluster-name';
export const VIRTUAL_CLUSTER_NAMESPACE_LABEL = 'platform.dev/virtual-cluster-namespace';

const MAX_NAME = 63;

export function defaultServiceAccount(vcName: string): string {
  return `vc-${vcName}`;
}

/** `vc-platform-key-<name>-<namespace>-<hash>`, at most 63 characters, the same for the same virtual cluster. */
export function rbacObjectName(vc: VirtualClusterRef): string {
  const hash = createHash('sha256').update(`${vc.namespace}/${vc.name}`).digest('hex').slice(0, 8);
  const head = `vc-platform-key-${vc.name}-${vc.namespace}`;
  const room = MAX_NAME - hash.length - 1;
  return `${head.slice(0, room).replace(/[-.]+$/, '')}-${hash}`;
}

/**
 * The Role and RoleBinding the virtual cluster needs to read its connection secret,
 * or undefined when none are needed (createRBAC off, or the secret is in the
 * virtual cluster's own namespace).
 */
export function connectionRbac(apiKey: ApiKeySettings, vc: VirtualClusterRef): ConnectionRbac | undefined {
  const secretNamespace = apiKey.namespace ?? vc.namespace;
  if (!apiKey.createRBAC || secretNamespace === vc.namespace) return undefined;
  const name = rbacObjectName(vc);
  const labels: Record<string, string> = {
    [VIRTUAL_CLUSTER_NAME_LABEL]: vc.name,
    [VIRTUAL_CLUSTER_NAMESPACE_LABEL]: vc.namespace,
  };
  return {
    role: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: secretNamespace, labels: { ...labels } },
      rules: [
        { apiGroups: [''], resources: ['secrets'], resourceNames: [apiKey.secretName], verbs: ['get'] },
      ],
    },
    roleBinding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: secretNamespace, labels: { ...labels } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [
        {
          kind: 'ServiceAccount',
          name: vc.serviceAccount ?? defaultServiceAccount(vc.name),
          namespace: vc.namespace,
        },
      ],
    },
  };
}
