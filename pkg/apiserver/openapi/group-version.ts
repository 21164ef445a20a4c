// The OpenAPI documents from one walk of the routes: the server publishes v2 and v3
// together, and they must describe the same operations. Besides the API group
// version, the built-in group versions served here (the reviews of
// authorization.k8s.io/v1 and authentication.k8s.io/v1, pkg/server/self-reviews.ts)
// are in /openapi/v2, which holds every group as kube-apiserver's does, and each
// has a v3 document of its own, as kube-apiserver publishes one per group version.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import { groupVersionRoutes } from './routes.js';
import { swaggerDocument } from './v2.js';
import { openAPIV3Document } from './v3.js';

export interface OpenAPIDocuments {
  /** `/openapi/v2` (Swagger 2.0). */
  readonly v2: JSONSchema;
  /**
   * `/openapi/v2` with the API group version alone: what the host's aggregator is
   * given, since the host's kube-apiserver publishes its own built-in groups.
   */
  readonly v2GroupOnly: JSONSchema;
  /** `/openapi/v3/apis/<group>/<version>`. */
  readonly v3: JSONSchema;
  /** `/openapi/v3/apis/<group>/<version>` of each built-in group version served, by `<group>/<version>`. */
  readonly builtinV3: ReadonlyMap<string, JSONSchema>;
}

/** Resources by `<group>/<version>`, in the order first met. */
export function byGroupVersion(resources: readonly RESTStorage[]): Map<string, RESTStorage[]> {
  const out = new Map<string, RESTStorage[]>();
  for (const storage of resources) {
    const key = `${storage.info.group}/${storage.info.version}`;
    const list = out.get(key);
    if (list) list.push(storage);
    else out.set(key, [storage]);
  }
  return out;
}

export function openAPIDocuments(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
  builtin: readonly RESTStorage[] = [],
): OpenAPIDocuments {
  const routes = groupVersionRoutes(group, version, resources);
  const builtinRoutes = [...byGroupVersion(builtin)].map(([groupVersion, served]) => {
    const [g = '', v = ''] = groupVersion.split('/');
    return { groupVersion, group: g, version: v, routes: groupVersionRoutes(g, v, served) };
  });
  const builtinV3 = new Map<string, JSONSchema>();
  for (const b of builtinRoutes) builtinV3.set(b.groupVersion, openAPIV3Document(b.group, b.version, b.routes, true));
  const v2 = swaggerDocument(group, version, routes, builtinRoutes);
  return {
    v2,
    v2GroupOnly: builtinRoutes.length > 0 ? swaggerDocument(group, version, routes) : v2,
    v3: openAPIV3Document(group, version, routes),
    builtinV3,
  };
}

/** `/openapi/v2` alone (tests and tools that want one document). */
export function openAPIV2(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
  builtin: readonly RESTStorage[] = [],
): JSONSchema {
  return openAPIDocuments(group, version, resources, builtin).v2;
}

/** `/openapi/v3/apis/<group>/<version>` alone. */
export function openAPIV3GroupVersion(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): JSONSchema {
  return openAPIDocuments(group, version, resources).v3;
}
