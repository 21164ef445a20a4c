// compileSchema: a kind's JSON schema turned into the CompiledSchema the generic
// Store uses (validation, unknown-field detection, pruning). ajv compiles the
// validator once per kind; unknown fields come from walking the schema directly,
// because that walk must know structural-schema rules ajv does not.

import { Ajv, type ValidateFunction } from 'ajv';

import type { FieldError } from '../meta/field-errors.js';
import { isObject } from '../meta/types.js';
import { convertAjvErrors } from './ajv-errors.js';
import { isBase64, isDateTime, isInt32, isInt64 } from './formats.js';
import { validateListTypes } from './list-types.js';
import type { CompiledSchema } from './types.js';
import {
  dropDisallowedNulls,
  rootPath,
  walkUnknownFields,
  withoutDisallowedNulls,
} from './unknown-fields.js';
import type { SchemaNode } from './walk.js';

function newAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // Descriptions and x-kubernetes-* extensions are not JSON Schema keywords.
    strict: false,
    verbose: true,
    logger: false,
  });
  ajv.addFormat('byte', { type: 'string', validate: isBase64 });
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  ajv.addFormat('int32', { type: 'number', validate: isInt32 });
  ajv.addFormat('int64', { type: 'number', validate: isInt64 });
  return ajv;
}

let shared: Ajv | undefined;

/** The schema ajv validates: metadata is the Store's business, so anything goes there. */
function withoutMetadataValidation(schema: SchemaNode): SchemaNode {
  const props = schema['properties'];
  if (!isObject(props) || !('metadata' in props)) return schema;
  return { ...schema, properties: { ...props, metadata: {} } };
}

/**
 * Compiles a kind schema (OpenAPI v3 structural subset). Call once per kind and keep
 * the result. `validate` ignores `metadata` and treats nulls in non-nullable fields as
 * absent; `prune` removes unknown fields and those nulls in place.
 */
export function compileSchema(schema: Record<string, unknown>): CompiledSchema {
  shared ??= newAjv();
  const validator: ValidateFunction = shared.compile(withoutMetadataValidation(schema));

  return {
    validate(obj: unknown): FieldError[] {
      const data = withoutDisallowedNulls(obj, schema);
      // Sets and list-maps must hold each member or key once (server-side apply depends on it).
      const duplicates = validateListTypes(schema, data);
      if (validator(data)) return duplicates;
      return [...convertAjvErrors(validator.errors ?? [], data, schema), ...duplicates];
    },
    unknownFields(obj: unknown): string[] {
      const out: string[] = [];
      walkUnknownFields(obj, schema, rootPath(), false, out);
      return out;
    },
    prune(obj: unknown): void {
      walkUnknownFields(obj, schema, rootPath(), true, []);
      dropDisallowedNulls(obj, schema);
    },
  };
}
