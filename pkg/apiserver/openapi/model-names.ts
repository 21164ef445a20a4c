// Model (schema) names as Kubernetes publishes them: the group reversed, then the
// version and kind (`dev.platform.management.v1.User`), and meta/v1 types and
// Kubernetes' own kinds under their Go package path, which kubectl and the
// aggregator recognise.

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export function modelName(gvk: GroupVersionKind): string {
  // Kubernetes' own kinds go by their Go package, k8s.io/api/<first segment of the group>
  // (authorization.k8s.io -> io.k8s.api.authorization.v1.SelfSubjectAccessReview).
  if (gvk.group.endsWith('.k8s.io')) return `io.k8s.api.${gvk.group.split('.')[0] ?? ''}.${gvk.version}.${gvk.kind}`;
  const group = gvk.group.split('.').reverse().join('.');
  return group ? `${group}.${gvk.version}.${gvk.kind}` : `${gvk.version}.${gvk.kind}`;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

export const META_MODELS = {
  objectMeta: `${META}.ObjectMeta`,
  listMeta: `${META}.ListMeta`,
  status: `${META}.Status`,
  deleteOptions: `${META}.DeleteOptions`,
  watchEvent: `${META}.WatchEvent`,
  patch: `${META}.Patch`,
} as const;

/** A path-safe operation id part, as apiserver's ToValidOperationID builds it. */
export function toOperationIdPart(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let first = true;
  for (const ch of s) {
    const letter = /\p{L}/u.test(ch) || ch === '_';
    const digit = /[0-9]/.test(ch);
    if (letter || (!first && digit)) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
    first = false;
  }
  return out;
}
