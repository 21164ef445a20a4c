// Turning a parsed request body into an object of the resource's kind: the
// envelope checks and the fieldValidation directive that k8s.io/apiserver's
// handlers (create.go, update.go, patch.go, rest.go transformDecodeError) apply
// while decoding. The body arrives already parsed from JSON or YAML.

import { newBadRequest, newInvalid, type ApiError } from '../../apis/meta/errors.js';
import { fieldErrorString, invalid } from '../../apis/meta/field-errors.js';
import { isObject, type KubeObject } from '../../apis/meta/types.js';
import {
  pruneObjectMeta,
  unknownObjectMetaFields,
  validateObjectMetaTypes,
} from '../../apis/meta/validation.js';
import type { CompiledSchema } from '../../apis/schema/types.js';
import type { FieldValidation, ResourceInfo } from '../rest/interfaces.js';

/** How a decoding problem is reported: a request body is a 400, a patched object a 422. */
export type DecodeMode = 'body' | 'patch';

export interface DecodeOptions {
  readonly info: ResourceInfo;
  readonly schema: CompiledSchema;
  readonly fieldValidation: FieldValidation;
  readonly warnings: string[];
  readonly mode: DecodeMode;
  /**
   * An applied configuration: its unknown fields are left for the field manager,
   * which refuses them while typing the configuration (structuredmerge.go, 500
   * `failed to create typed patch object`) in every validation mode, before
   * fieldValidation is ever looked at.
   */
  readonly unknownFieldsTyped?: boolean;
}

const ENVELOPE = new Set(['apiVersion', 'kind', 'metadata']);

function summarize(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 30 ? `${text.slice(0, 30)} ...` : text;
}

function cannotHandle(info: ResourceInfo, dataKind: string, detail: string): ApiError {
  return newBadRequest(
    `${dataKind} in version ${JSON.stringify(info.version)} cannot be handled as a ${info.kind}: ${detail}`,
  );
}

/** Unknown fields in document order: grouped by the top-level key they sit under. */
function unknownFields(obj: Record<string, unknown>, schema: CompiledSchema): string[] {
  const found = new Set<string>();
  for (const path of schema.unknownFields(obj)) if (!ENVELOPE.has(path)) found.add(path);
  for (const path of unknownObjectMetaFields(obj.metadata)) found.add(path);
  const order = Object.keys(obj);
  const rank = (path: string): number => {
    const top = /^[^.[]+/.exec(path)?.[0] ?? path;
    const i = order.indexOf(top);
    return i < 0 ? order.length : i;
  };
  return [...found]
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i)
    .map(({ p }) => p);
}

function strictError(paths: readonly string[]): string {
  return `strict decoding error: ${paths.map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;
}

/**
 * A 422 about the patched document as a whole (handlers/patch.go). Upstream puts the
 * patched object's JSON in the message as the bad value; it is omitted here, for any
 * kind: a SharedSecret's data (or any value a client sent) must not reach a Status
 * or the audit log (docs/design.md, "Conventions").
 */
export function invalidPatch(detail: string): ApiError {
  return newInvalid({ group: '', kind: '' }, '', [{ ...invalid('patch', undefined, detail), omitValue: true }]);
}

/**
 * Checks the envelope of `body` and applies the fieldValidation directive,
 * returning an object with apiVersion and kind filled in. Unknown fields are
 * reported (Strict), warned about (Warn) or dropped silently (Ignore);
 * pruning happens in place on `body`.
 */
export function decodeObject(body: unknown, options: DecodeOptions): KubeObject {
  const { info, mode } = options;
  const expectedVersion = info.group ? `${info.group}/${info.version}` : info.version;
  if (!isObject(body)) {
    if (mode === 'patch') throw invalidPatch('the patched document must be an object');
    throw newBadRequest(
      `the object provided is unrecognized (must be of type ${info.kind}): the body must be a JSON or YAML object (${summarize(body)})`,
    );
  }

  const kind = body.kind;
  if (kind !== undefined && kind !== null && kind !== '' && kind !== info.kind) {
    const shown = typeof kind === 'string' ? kind : JSON.stringify(kind);
    const detail = `the kind in the data (${shown}) does not match the expected kind (${info.kind})`;
    if (mode === 'patch') throw invalidPatch(detail);
    throw cannotHandle(info, typeof kind === 'string' ? kind : info.kind, detail);
  }
  const apiVersion = body.apiVersion;
  if (
    apiVersion !== undefined &&
    apiVersion !== null &&
    apiVersion !== '' &&
    apiVersion !== expectedVersion
  ) {
    const shown = typeof apiVersion === 'string' ? apiVersion : JSON.stringify(apiVersion);
    throw newBadRequest(
      `the API version in the data (${shown}) does not match the expected API version (${expectedVersion})`,
    );
  }

  const typeErrors = validateObjectMetaTypes(body.metadata);
  if (typeErrors.length > 0) {
    if (mode === 'patch') throw newInvalid({ group: info.group, kind: info.kind }, nameOf(body), typeErrors);
    throw cannotHandle(info, info.kind, typeErrors.map(fieldErrorString).join(', '));
  }

  const unknown = options.unknownFieldsTyped ? [] : unknownFields(body, options.schema);
  if (unknown.length > 0) {
    switch (options.fieldValidation) {
      case 'Strict':
        if (mode === 'patch') throw invalidPatch(strictError(unknown));
        throw cannotHandle(info, info.kind, strictError(unknown));
      case 'Warn':
        for (const path of unknown) options.warnings.push(`unknown field ${JSON.stringify(path)}`);
        break;
      case 'Ignore':
        break;
    }
    options.schema.prune(body);
    pruneObjectMeta(body.metadata);
  }

  const metadata: Record<string, unknown> = isObject(body.metadata) ? body.metadata : {};
  // Go decodes a null into the zero value; drop nulls so that "absent" has one spelling.
  for (const [k, v] of Object.entries(metadata)) if (v === null) delete metadata[k];
  // The envelope first, as every Kubernetes object is written.
  const { apiVersion: _v, kind: _k, metadata: _m, ...rest } = body;
  return { apiVersion: expectedVersion, kind: info.kind, metadata, ...rest };
}

function nameOf(body: Record<string, unknown>): string {
  const meta = body.metadata;
  return isObject(meta) && typeof meta.name === 'string' ? meta.name : '';
}
