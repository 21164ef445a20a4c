// The `status` subresource's rules, shared by every kind that has one (upstream:
// the CRD status strategy, apiextensions-apiserver registry/customresource
// status_strategy.go, and the StatusREST beside each built-in Store). A write to
// `<resource>/<name>/status` changes only `status`: the object written is the
// stored one with the request's status in it, whatever else the request held.

import type { KubeObject } from '../../apis/meta/types.js';
import type { ResourceInfo, SubresourceInfo } from '../rest/interfaces.js';
import { clone } from './object.js';

export const STATUS_SUBRESOURCE = 'status';

/** How discovery and OpenAPI list `<resource>/status`: the parent's kind, get/patch/update. */
export function statusSubresourceInfo(parent: ResourceInfo): SubresourceInfo {
  return { name: STATUS_SUBRESOURCE, kind: parent.kind, verbs: ['get', 'patch', 'update'] };
}

/**
 * Makes `obj` the stored `old` with only `obj`'s status kept (its absence
 * removes the stored status). The resourceVersion was already checked equal,
 * so taking the stored one is safe. `obj`'s managedFields stay: an apply has
 * already recorded itself in them (the status strategy keeps them too).
 */
export function keepAllButStatus(obj: KubeObject, old: KubeObject): void {
  const status = obj['status'];
  const managedFields = obj.metadata.managedFields;
  for (const key of Object.keys(obj)) delete obj[key];
  Object.assign(obj, clone(old));
  if (status === undefined) delete obj['status'];
  else obj['status'] = status;
  if (managedFields === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = managedFields;
}
