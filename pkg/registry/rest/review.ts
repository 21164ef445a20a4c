// The body of a review (a kind that is created to ask a question and never stored:
// SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview). It must be an
// object of the review's kind; apiVersion and kind may be left out, as the URL names them.

import { newBadRequest } from '../../apis/meta/errors.js';
import { isObject } from '../../apis/meta/types.js';
import type { ResourceInfo } from './interfaces.js';

export interface ReviewBody {
  readonly metadata: Record<string, unknown>;
  readonly spec: Record<string, unknown>;
}

/** True when metadata holds nothing (JSON clients send `creationTimestamp: null`). */
export function isEmptyMetadata(metadata: Record<string, unknown>): boolean {
  return Object.values(metadata).every(
    (v) => v === null || v === '' || (isObject(v) && Object.keys(v).length === 0),
  );
}

export function reviewBody(body: unknown, info: ResourceInfo): ReviewBody {
  const groupVersion = `${info.group}/${info.version}`;
  if (!isObject(body)) throw newBadRequest(`not a ${info.kind}: the body is not an object`);
  const { kind, apiVersion } = body;
  if (
    (kind !== undefined && kind !== info.kind) ||
    (apiVersion !== undefined && apiVersion !== groupVersion)
  ) {
    throw newBadRequest(
      `not a ${info.kind}: the body is ${JSON.stringify(kind ?? '')} in version ${JSON.stringify(apiVersion ?? '')}, this endpoint takes ${info.kind} in version ${JSON.stringify(groupVersion)}`,
    );
  }
  const metadata = isObject(body['metadata']) ? body['metadata'] : {};
  const spec = isObject(body['spec']) ? body['spec'] : {};
  return { metadata, spec };
}
