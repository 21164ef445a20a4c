// Both OpenAPI documents of the group version from one walk of its routes: the
// server publishes v2 and v3 together, and they must describe the same operations.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import type { RESTStorage } from '../../registry/rest/interfaces.js';
import { groupVersionRoutes } from './routes.js';
import { swaggerDocument } from './v2.js';
import { openAPIV3Document } from './v3.js';

export interface OpenAPIDocuments {
  /** `/openapi/v2` (Swagger 2.0). */
  readonly v2: JSONSchema;
  /** `/openapi/v3/apis/<group>/<version>`. */
  readonly v3: JSONSchema;
}

export function openAPIDocuments(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): OpenAPIDocuments {
  const routes = groupVersionRoutes(group, version, resources);
  return { v2: swaggerDocument(group, version, routes), v3: openAPIV3Document(group, version, routes) };
}

/** `/openapi/v2` alone (tests and tools that want one document). */
export function openAPIV2(group: string, version: string, resources: readonly RESTStorage[]): JSONSchema {
  return openAPIDocuments(group, version, resources).v2;
}

/** `/openapi/v3/apis/<group>/<version>` alone. */
export function openAPIV3GroupVersion(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): JSONSchema {
  return openAPIDocuments(group, version, resources).v3;
}
