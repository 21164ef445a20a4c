// The patch types a PATCH may carry (k8s.io/apiserver handlers/patch.go):
// JSON patch (RFC 6902, through fast-json-patch), JSON merge patch (RFC 7386)
// and strategic merge patch. Server-side apply takes another path (the Store's
// apply, through the field manager): it never reaches these functions.
// Checking a patch happens once, before storage; applying it may happen several
// times, when the update is retried after a conflict.

import jsonpatch from 'fast-json-patch';

import { ApiError, newBadRequest, newRequestEntityTooLarge } from '../../apis/meta/errors.js';
import { isObject } from '../../apis/meta/types.js';
import type { PatchType } from '../rest/interfaces.js';
import { clone } from './object.js';
import { strategicMergePatch } from './strategic-merge-patch.js';

export const MAX_JSON_PATCH_OPERATIONS = 10000;

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
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}

/** The generic 422 for a JSON patch that does not apply; the detail goes in the cause. */
function rejected(detail: string): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'FieldValueInvalid', message: detail }],
  });
}

function jsonPatchDetail(err: unknown): string {
  if (err instanceof jsonpatch.JsonPatchError) {
    const op = isObject(err.operation) ? JSON.stringify(err.operation) : '';
    const first = err.message.split('\n')[0] ?? err.message;
    return op ? `${first}: ${op}` : first;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Applies a prepared patch to (a copy of) `current`; `schema` drives strategic merges. */
export function applyPatch(
  current: Record<string, unknown>,
  prepared: PreparedPatch,
  schema: Record<string, unknown>,
): unknown {
  switch (prepared.type) {
    case 'json':
      try {
        return jsonpatch.applyPatch(clone(current), clone(prepared.operations), true, true).newDocument;
      } catch (err) {
        throw rejected(jsonPatchDetail(err));
      }
    case 'merge':
      return mergePatch(current, prepared.patch);
    case 'strategic':
      return strategicMergePatch(current, prepared.patch, schema);
  }
}
