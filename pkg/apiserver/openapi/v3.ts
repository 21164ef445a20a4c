// OpenAPI v3: the root that lists the group version (`/openapi/v3`) and the group
// version's document (`/openapi/v3/apis/<group>/<version>`), in the form
// kube-openapi's handler serves and kubectl (explain, apply, field validation) reads.

import { createHash } from 'node:crypto';

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import { kindSchemas, withReferenced } from './components.js';
import { metaSchemas, type Ref } from './meta-schemas.js';
import type { QueryParameter } from './parameters.js';
import { BEARER_TOKEN_SCHEME, documentInfo, kubernetesExtensions, pathItems } from './paths.js';
import type { PathParameterName } from './paths.js';
import type { GroupVersionRoutes, Route } from './routes.js';

export interface OpenAPIV3Root {
  paths: Record<string, { serverRelativeURL: string }>;
}

/** The `?hash=` of a document: upper-case hex SHA-512 of its JSON, as kube-openapi computes it. */
export function specHash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}

/** One group version listed in `/openapi/v3`: `apis/<group>/<version>` and its document's hash. */
export interface OpenAPIV3Entry {
  readonly groupVersion: string;
  readonly hash: string;
}

/**
 * `/openapi/v3`: where each group version's document lives. `hash` pins the current
 * document (specHash of its JSON) so clients may cache it for good.
 */
export function openAPIV3Root(entries: readonly OpenAPIV3Entry[]): OpenAPIV3Root {
  const paths: OpenAPIV3Root['paths'] = {};
  for (const { groupVersion, hash } of entries) {
    const gv = `apis/${groupVersion}`;
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${encodeURIComponent(hash)}` };
  }
  return { paths };
}

const ref: Ref = (model) => ({ allOf: [{ $ref: `#/components/schemas/${model}` }] });
const directRef = (model: string): JSONSchema => ({ $ref: `#/components/schemas/${model}` });

function queryParameter(p: QueryParameter): JSONSchema {
  return {
    name: p.name,
    in: 'query',
    description: p.description,
    schema: { type: p.type, uniqueItems: true },
  };
}

function pathParameter(name: PathParameterName, description: string): JSONSchema {
  return { name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } };
}

function content(types: readonly string[], model: string): JSONSchema {
  const out: JSONSchema = {};
  for (const type of types) out[type] = { schema: directRef(model) };
  return out;
}

function operation(route: Route): JSONSchema {
  const op: JSONSchema = {
    tags: [route.tag],
    description: route.description,
    operationId: route.operationId,
    parameters: route.query.map(queryParameter),
  };
  if (route.body) {
    op['requestBody'] = {
      content: content(route.body.contentTypes, route.body.model),
      required: route.body.required,
    };
  }
  const responses: JSONSchema = {};
  for (const r of route.responses) {
    responses[r.code] = { description: r.description, content: content(route.produces, r.model) };
  }
  responses['401'] = { description: 'Unauthorized' };
  op['responses'] = responses;
  return { ...op, ...kubernetesExtensions(route) };
}

/**
 * `/openapi/v3/apis/<group>/<version>`: every operation and schema of the group
 * version's routes. A built-in group version (the reviews) carries its own kinds'
 * schemas and only the meta/v1 models they refer to, as upstream's documents do.
 */
export function openAPIV3Document(
  group: string,
  version: string,
  gv: GroupVersionRoutes,
  builtin = false,
): JSONSchema {
  const { routes, kinds } = gv;
  const paths = pathItems(routes, { pathParameter, queryParameter, operation });
  let schemas = kindSchemas(group, version, kinds, ref, 'v3');
  const meta = metaSchemas(group, ref);
  if (builtin) schemas = withReferenced(schemas, meta);
  else Object.assign(schemas, meta);
  return {
    openapi: '3.0.0',
    info: documentInfo(group, version),
    paths,
    components: {
      schemas,
      securitySchemes: {
        BearerToken: BEARER_TOKEN_SCHEME,
      },
    },
    security: [{ BearerToken: [] }],
  };
}
