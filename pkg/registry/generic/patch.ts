// The patch types a PATCH may carry (k8s.io/apiserver handlers/patch.go):
// JSON patch (RFC 6902, through fast-json-patch), JSON merge patch (RFC 7386)
// and strategic merge patch. Server-side apply takes another path (the Store's
// apply, through the field manager): it never reaches these functions.
// Checking a patch happens once, before storage; applying it may happen several
// times, when the update is retried after a conflict.

import jsonpatch from 'fast-json-patch';

import { ApiError, newBadRequest, newInvalid, newRequestEntityTooLarge } from '../../apis/meta/errors.js';
import { isObject } from '../../apis/meta/types.js';
import type { PatchType } from '../rest/interfaces.js';
import { ownMember, setOwn } from '../../util/own-member.js';
import { clone, MAX_NESTING_DEPTH, nestingDepth, nestsDeeperThan } from './object.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

export const MAX_JSON_PATCH_OPERATIONS = 10000;

/**
 * How many bytes `copy` operations of one JSON patch may add in total: kube-apiserver
 * arms json-patch's AccumulatedCopySizeLimit with JSONPatchMaxCopyBytes (the request
 * body limit, 3 MiB), so forty doublings of a value cannot take the server's memory.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

export type PreparedPatch =
  | { readonly type: 'json'; readonly operations: jsonpatch.Operation[] }
  | { readonly type: 'merge' | 'strategic'; readonly patch: Record<string, unknown> };

/** Checks a patch body before any object is read: 400, 413 or 415 when it cannot be applied to anything. */
export function preparePatch(type: PatchType, patch: unknown): PreparedPatch {
  switch (type) {
    case 'json': {
      if (!Array.isArray(patch) || !patch.every((op) => isObject(op))) {
        throw newBadRequest(
          'json: cannot unmarshal the patch: a JSON patch must be a list of operation objects',
        );
      }
      if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
        throw newRequestEntityTooLarge(
          `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`,
        );
      }
      return { type, operations: patch as unknown as jsonpatch.Operation[] };
    }
    case 'merge':
    case 'strategic':
      if (!isObject(patch)) throw newBadRequest('Invalid JSON Patch');
      return { type, patch };
    case 'apply':
      // The Store merges apply patches itself; reaching here is a wiring mistake, not the client's.
      throw new Error('apply patches are merged by the field manager, not preparePatch');
  }
}

/** RFC 7386: objects merge recursively, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else setOwn(result, k, mergePatch(ownMember(result, k), v));
  }
  return result;
}

/** The generic 422 for a JSON patch that does not apply; the detail goes in the cause. */
/**
 * A JSON Patch that fails to apply: upstream's generic 422 (patch.go answers
 * NewGenericServerResponse(422, ..., err.Error(), 0, false)), which keeps no cause. The
 * failure's text is dropped as upstream drops it: a failed `test` quotes the operation's
 * value, which on a Global Secret is a secret value, and no secret may reach an error
 * or an audit event.
 */
function rejected(): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

/** Applies a prepared patch to (a copy of) `current`; `schema` drives strategic merges. */
export function applyPatch(
  current: Record<string, unknown>,
  prepared: PreparedPatch,
  schema: Record<string, unknown>,
): unknown {
  switch (prepared.type) {
    case 'json':
      return applyJSONPatch(current, prepared.operations);
    case 'merge':
      return boundedDepth(mergePatch(current, prepared.patch));
    case 'strategic':
      return boundedDepth(strategicMergePatch(current, prepared.patch, schema));
  }
}

/** How many levels a JSON pointer descends (`/spec/a` is 2). */
function pointerDepth(pointer: string): number {
  return pointer === '' ? 0 : pointer.split('/').length - 1;
}

/**
 * RFC 6902 one operation at a time, counting what `copy` adds against
 * MAX_JSON_PATCH_COPY_BYTES and keeping the document within MAX_NESTING_DEPTH: an
 * upper bound of its depth is raised by what each operation puts where, and the
 * document is measured only when that bound passes the limit.
 */
function applyJSONPatch(
  current: Record<string, unknown>,
  operations: readonly jsonpatch.Operation[],
): unknown {
  let document: unknown = clone(current);
  let depthBound = nestingDepth(document);
  let copied = 0;
  try {
    for (const operation of clone(operations)) {
      let placed = 0;
      if (operation.op === 'add' || operation.op === 'replace') {
        placed = pointerDepth(operation.path) + nestingDepth(operation.value);
      } else if (operation.op === 'copy' || operation.op === 'move') {
        const value: unknown = jsonpatch.getValueByPointer(document, operation.from);
        if (operation.op === 'copy') {
          copied += Buffer.byteLength(JSON.stringify(value) ?? '');
          if (copied > MAX_JSON_PATCH_COPY_BYTES) {
            throw rejected();
          }
          placed = pointerDepth(operation.path) + nestingDepth(value);
        } else {
          placed = pointerDepth(operation.path) + depthBound;
        }
      }
      document = jsonpatch.applyOperation(document, operation, true, true).newDocument;
      depthBound = Math.max(depthBound, placed);
      if (depthBound > MAX_NESTING_DEPTH) {
        depthBound = nestingDepth(document);
        if (depthBound > MAX_NESTING_DEPTH) throw tooDeep();
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw rejected();
  }
  return document;
}

/** The 422 for a patched object nested past MAX_NESTING_DEPTH (the value is too big to quote). */
function tooDeep(): ApiError {
  return newInvalid({ group: '', kind: '' }, '', [
    {
      type: 'FieldValueInvalid',
      field: 'patch',
      detail: `exceeded max depth of ${MAX_NESTING_DEPTH}`,
      omitValue: true,
    },
  ]);
}

function boundedDepth(patched: unknown): unknown {
  if (nestsDeeperThan(patched)) throw tooDeep();
  return patched;
}
