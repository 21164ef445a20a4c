// Owner references that can never be valid (kube-controller-manager reports them
// as OwnerRefInvalidNamespace events): a cluster-scoped object owned by a
// namespaced kind, a namespaced owner that lives in another namespace, an owner
// kind this server does not serve. They never cause a deletion. Each one is
// reported once (the graph re-examines an object many times) in the log and in a
// plain counter that a metrics registry can read.

import type { Logger } from '../../util/log/index.js';
import type { OwnerReference } from '../../apis/meta/types.js';
import type { ObjectIdentity } from './graph.js';

export type InvalidReason =
  'ClusterScopedDependentOfNamespacedOwner' | 'OwnerInOtherNamespace' | 'OwnerKindNotServed';

const MESSAGES: Readonly<Record<InvalidReason, string>> = {
  ClusterScopedDependentOfNamespacedOwner:
    'a cluster-scoped object cannot be owned by a namespaced object: the reference is ignored and never causes a deletion',
  OwnerInOtherNamespace:
    "the owner lives in another namespace, and an owner must be in its dependent's namespace: the reference is ignored and never causes a deletion",
  OwnerKindNotServed:
    "the owner's kind is not served by this server: the reference is ignored and never causes a deletion",
};

export class InvalidOwnerReferences {
  /** How many distinct invalid references were seen (dependent uid and owner uid), ever. */
  count = 0;
  private readonly reported = new Set<string>();

  constructor(private readonly logger?: Logger) {}

  report(dependent: ObjectIdentity, ref: OwnerReference, reason: InvalidReason): void {
    const key = `${dependent.uid}/${ref.uid}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.count++;
    this.logger?.warn('invalid owner reference', {
      reason,
      message: MESSAGES[reason],
      dependent: describe(dependent),
      owner: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid },
    });
  }
}

function describe(id: ObjectIdentity): Record<string, string> {
  return {
    apiVersion: id.apiVersion,
    kind: id.kind,
    ...(id.namespace ? { namespace: id.namespace } : {}),
    name: id.name,
    uid: id.uid,
  };
}
