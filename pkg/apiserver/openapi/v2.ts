// OpenAPI v2 (Swagger 2.0) of the group version, for clients and aggregators that
// still read `/openapi/v2`: the same operations and schemas as v3, with `consumes`
// and `produces` on operations and `#/definitions/` references.

import type { JSONSchema } from '../../apis/management/v1/schema-builders.js';
import { kindSchemas, stripNullable } from './components.js';
import { metaSchemas, type Ref } from './meta-schemas.js';
import type { QueryParameter } from './parameters.js';
import { BEARER_TOKEN_SCHEME, documentInfo, kubernetesExtensions, pathItems } from './paths.js';
import type { PathParameterName } from './paths.js';
import type { GroupVersionRoutes, Route } from './routes.js';

const ref: Ref = (model) => ({ $ref: `#/definitions/${model}` });

function queryParameter(p: QueryParameter): JSONSchema {
  return { uniqueItems: true, type: p.type, description: p.description, name: p.name, in: 'query' };
}

function pathParameter(name: PathParameterName, description: string): JSONSchema {
  return { uniqueItems: true, type: 'string', description, name, in: 'path', required: true };
}

function operation(route: Route): JSONSchema {
  const parameters: JSONSchema[] = [];
  if (route.body) {
    parameters.push({
      name: 'body',
      in: 'body',
      required: route.body.required,
      schema: ref(route.body.model),
    });
  }
  parameters.push(...route.query.map(queryParameter));
  const responses: JSONSchema = {};
  for (const r of route.responses) responses[r.code] = { description: r.description, schema: ref(r.model) };
  responses['401'] = { description: 'Unauthorized' };
  const op: JSONSchema = {
    description: route.description,
    consumes: route.body ? [...route.body.contentTypes] : ['*/*'],
    produces: [...route.produces],
    schemes: ['https'],
    tags: [route.tag],
    operationId: route.operationId,
    parameters,
    responses,
    ...kubernetesExtensions(route),
  };
  return op;
}

/**
 * `/openapi/v2`: the group version's routes as a Swagger 2.0 document, and those of
 * the built-in group versions served here (the reviews), as kube-apiserver's one
 * document holds every group.
 */
export function swaggerDocument(
  group: string,
  version: string,
  gv: GroupVersionRoutes,
  builtin: readonly { group: string; version: string; routes: GroupVersionRoutes }[] = [],
): JSONSchema {
  const dialect = { pathParameter, queryParameter, operation };
  const paths = pathItems(gv.routes, dialect);
  const definitions = kindSchemas(group, version, gv.kinds, ref, 'v2');
  for (const b of builtin) {
    Object.assign(paths, pathItems(b.routes.routes, dialect));
    Object.assign(definitions, kindSchemas(b.group, b.version, b.routes.kinds, ref, 'v2'));
  }
  for (const [name, schema] of Object.entries(metaSchemas(group, ref))) {
    definitions[name] = stripNullable(schema) as JSONSchema;
  }
  return {
    swagger: '2.0',
    info: documentInfo(group, version),
    paths,
    definitions,
    securityDefinitions: {
      BearerToken: BEARER_TOKEN_SCHEME,
    },
    security: [{ BearerToken: [] }],
  };
}
