// The resources the host double serves and how the API server shapes them: their
// kind, apiVersion and qualified name (as error messages print it), whether they are
// namespaced, and the Secret's write-only stringData folded into base64 data.
// ConfigMaps, Secrets, Roles and RoleBindings are plain objects; the
// CertificateSigningRequest API has its own rules (host-csr.ts).

import { StatusError } from './host-errors.js';
import type { StoredObject } from './object-store.js';

export interface KindInfo {
  readonly kind: string;
  readonly apiVersion: string;
  /** As in error messages: `configmaps`, `certificatesigningrequests.certificates.k8s.io`. */
  readonly qualified: string;
  readonly namespaced: boolean;
}

export const KINDS: Record<string, KindInfo> = {
  configmaps: { kind: 'ConfigMap', apiVersion: 'v1', qualified: 'configmaps', namespaced: true },
  secrets: { kind: 'Secret', apiVersion: 'v1', qualified: 'secrets', namespaced: true },
  // Added for the CLI's virtual cluster connection RBAC (issue 6): plain CRUD, no RBAC evaluation.
  roles: {
    kind: 'Role',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    qualified: 'roles.rbac.authorization.k8s.io',
    namespaced: true,
  },
  rolebindings: {
    kind: 'RoleBinding',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    qualified: 'rolebindings.rbac.authorization.k8s.io',
    namespaced: true,
  },
  certificatesigningrequests: {
    kind: 'CertificateSigningRequest',
    apiVersion: 'certificates.k8s.io/v1',
    qualified: 'certificatesigningrequests.certificates.k8s.io',
    namespaced: false,
  },
};

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A Secret as the API server stores it: data only (base64), stringData folded in, type Opaque by default. */
export function normalizeSecret(obj: StoredObject): void {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(asRecord(obj.data))) if (typeof v === 'string') data[k] = v;
  // stringData is write-only: folded into data, as the API server does.
  for (const [k, v] of Object.entries(asRecord(obj.stringData)))
    if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
  delete obj.stringData;
  obj.data = data;
  if (typeof obj.type !== 'string' || obj.type === '') obj.type = 'Opaque';
}

/** An object as served: with its kind and apiVersion. */
export function withKind(info: KindInfo, obj: StoredObject): StoredObject {
  return { ...obj, apiVersion: info.apiVersion, kind: info.kind };
}

/** kube-apiserver's 404 for a named object of a kind. */
export function notFound(info: KindInfo, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${info.qualified} "${name}" not found`, {
    name,
    kind: info.qualified.split('.')[0],
  });
}
