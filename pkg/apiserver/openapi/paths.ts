// The `paths` object both OpenAPI documents share: one path item a route path, its
// path parameters and `pretty` once on the item, and an operation a method. v2 and
// v3 differ only in how a parameter and an operation are written (kube-openapi's
// builder and builder3 walk the same routes), so each passes its own dialect.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import { PRETTY, type QueryParameter } from './parameters.js';
import type { Route } from './routes.js';

export type PathParameterName = Route['pathParameters'][number];

/** How one OpenAPI version writes parameters and operations. */
export interface PathDialect {
  pathParameter(name: PathParameterName, description: string): JSONSchema;
  queryParameter(p: QueryParameter): JSONSchema;
  operation(route: Route): JSONSchema;
}

/** The description apiserver's installer gives a path parameter. */
function pathParameterDescription(name: PathParameterName, kind: string): string {
  return name === 'name' ? `name of the ${kind}` : 'object name and auth scope, such as for teams and projects';
}

export function pathItems(routes: readonly Route[], dialect: PathDialect): Record<string, JSONSchema> {
  const paths: Record<string, JSONSchema> = {};
  for (const route of routes) {
    let item = paths[route.path];
    if (!item) {
      item = {
        parameters: [
          ...route.pathParameters.map((p) =>
            dialect.pathParameter(p, pathParameterDescription(p, route.gvk.kind)),
          ),
          dialect.queryParameter(PRETTY),
        ],
      };
      paths[route.path] = item;
    }
    item[route.method] = dialect.operation(route);
  }
  return paths;
}

/** The extensions kubectl reads on every operation: its action and group-version-kind. */
export function kubernetesExtensions(route: Route): JSONSchema {
  return {
    'x-kubernetes-action': route.action,
    'x-kubernetes-group-version-kind': {
      group: route.gvk.group,
      version: route.gvk.version,
      kind: route.gvk.kind,
    },
  };
}

/** The document's title and version, the same in v2 and v3. */
export function documentInfo(group: string, version: string): JSONSchema {
  return { title: 'Platform management API', version: `${group}/${version}` };
}

/** Access keys go in the Authorization header: the security scheme both versions declare. */
export const BEARER_TOKEN_SCHEME: JSONSchema = {
  type: 'apiKey',
  description: 'Bearer token (an access key)',
  name: 'authorization',
  in: 'header',
};
