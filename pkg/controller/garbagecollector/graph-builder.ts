// Keeps the graph current from watch events and says what needs attention
// (kube-controller-manager garbagecollector/graph_builder.go processGraphChanges):
// a new or changed object updates its node and edges; an owner named but never
// seen becomes a virtual node whose existence the collector checks; an object
// that starts foreground deletion queues itself and its dependents; one that
// starts orphan deletion goes to the orphan queue; a deleted object queues its
// dependents, and its owners that wait for their dependents to go.

import type { KubeObject, OwnerReference } from '../../apis/meta/types.js';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from '../../apis/meta/validation.js';
import { Graph, GraphNode, type ObjectIdentity } from './graph.js';
import type { WorkQueue } from './work-queue.js';

/** What the graph needs to know of a kind an ownerReference names. */
export interface KindScope {
  /** True for namespaced kinds; undefined when this server does not serve the kind. */
  namespaced(apiVersion: string, kind: string): boolean | undefined;
}

export class GraphBuilder {
  readonly graph = new Graph();
  /**
   * `<dependent uid>/<owner uid>` of references to a namespaced owner seen in
   * another namespace than the dependent's. Remembered for as long as the
   * dependent lives: once the owner is gone, nothing else would tell.
   */
  private readonly crossNamespace = new Set<string>();

  constructor(
    private readonly scope: KindScope,
    private readonly attemptToDelete: WorkQueue<GraphNode>,
    private readonly attemptToOrphan: WorkQueue<GraphNode>,
  ) {}

  /** A relist of one kind: objects missing from it are gone. */
  replace(apiVersion: string, kind: string, items: readonly KubeObject[]): void {
    const present = new Set<string>();
    for (const obj of items) {
      const withKind = { ...obj, apiVersion, kind };
      present.add(obj.metadata.uid ?? '');
      this.upsert(withKind);
    }
    for (const node of this.graph.observedOf(apiVersion, kind)) {
      if (!present.has(node.identity.uid)) this.removeNode(node);
    }
  }

  upsert(obj: KubeObject): void {
    const identity = identityOf(obj);
    if (!identity) return;
    const owners = obj.metadata.ownerReferences ?? [];
    const existing = this.graph.get(identity.uid);
    if (!existing) {
      const node = new GraphNode(identity, true);
      node.owners = [...owners];
      this.graph.add(node);
      this.addDependentToOwners(node, owners);
      this.processTransitions(obj, node);
      return;
    }
    if (!existing.observed) {
      // A virtual owner has now been seen: it exists.
      existing.observed = true;
      existing.identity = identity;
      for (const dep of existing.dependents) this.noteNamespaces(dep, existing);
    }
    const { added, removed, unblocked } = referenceDiffs(existing.owners, owners);
    existing.owners = [...owners];
    this.addDependentToOwners(existing, added);
    for (const ref of removed) {
      const owner = this.graph.get(ref.uid);
      if (!owner) continue;
      owner.dependents.delete(existing);
      // An owner waiting in foreground deletion may be waiting for exactly this one.
      if (owner.deletingDependents) this.attemptToDelete.add(owner);
    }
    for (const ref of unblocked) {
      const owner = this.graph.get(ref.uid);
      if (owner?.deletingDependents) this.attemptToDelete.add(owner);
    }
    this.processTransitions(obj, existing);
  }

  remove(obj: KubeObject): void {
    const node = this.graph.get(obj.metadata.uid ?? '');
    if (node?.observed) this.removeNode(node);
  }

  /** A virtual node whose owner turned out not to exist: forget it and re-examine its dependents. */
  removeVirtual(node: GraphNode): void {
    if (node.observed || this.graph.get(node.identity.uid) !== node) return;
    this.removeNode(node);
  }

  /** True when the dependent names this owner, which was seen in another namespace. */
  isCrossNamespace(dependentUid: string, ownerUid: string): boolean {
    return this.crossNamespace.has(`${dependentUid}/${ownerUid}`);
  }

  private noteNamespaces(dependent: GraphNode, owner: GraphNode): void {
    if (!owner.observed || owner.identity.namespace === '') return;
    if (owner.identity.namespace !== dependent.identity.namespace)
      this.crossNamespace.add(`${dependent.identity.uid}/${owner.identity.uid}`);
  }

  private removeNode(node: GraphNode): void {
    this.graph.remove(node);
    for (const ref of node.owners) this.crossNamespace.delete(`${node.identity.uid}/${ref.uid}`);
    for (const dep of node.dependents) this.attemptToDelete.add(dep);
    for (const ref of node.owners) {
      const owner = this.graph.get(ref.uid);
      if (owner?.deletingDependents) this.attemptToDelete.add(owner);
    }
  }

  private addDependentToOwners(node: GraphNode, owners: readonly OwnerReference[]): void {
    for (const ref of owners) {
      let owner = this.graph.get(ref.uid);
      if (!owner) {
        // Named but never seen: the collector checks whether it exists.
        const namespaced = this.scope.namespaced(ref.apiVersion, ref.kind);
        owner = new GraphNode(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            namespace: namespaced ? node.identity.namespace : '',
            name: ref.name,
            uid: ref.uid,
          },
          false,
        );
        this.graph.add(owner);
        this.attemptToDelete.add(owner);
      }
      owner.dependents.add(node);
      this.noteNamespaces(node, owner);
    }
  }

  /** graph_builder.go processTransitions: the start of an orphan or a foreground deletion. */
  private processTransitions(obj: KubeObject, node: GraphNode): void {
    const finalizers = obj.metadata.finalizers ?? [];
    const deleting = !!obj.metadata.deletionTimestamp;
    node.beingDeleted = deleting;
    if (deleting && finalizers.includes(FINALIZER_ORPHAN)) this.attemptToOrphan.add(node);
    const foreground = deleting && finalizers.includes(FINALIZER_FOREGROUND);
    if (foreground && !node.deletingDependents) {
      node.deletingDependents = true;
      for (const dep of node.dependents) this.attemptToDelete.add(dep);
      this.attemptToDelete.add(node);
    }
    if (!foreground) node.deletingDependents = false;
  }
}

function identityOf(obj: KubeObject): ObjectIdentity | undefined {
  const uid = obj.metadata.uid;
  if (!uid || !obj.apiVersion || !obj.kind) return undefined;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    uid,
  };
}

/** Owner references added, removed, and those whose blockOwnerDeletion went from true to false. */
function referenceDiffs(
  old: readonly OwnerReference[],
  next: readonly OwnerReference[],
): { added: OwnerReference[]; removed: OwnerReference[]; unblocked: OwnerReference[] } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const nextByUid = new Map(next.map((r) => [r.uid, r]));
  const added = next.filter((r) => !oldByUid.has(r.uid));
  const removed = old.filter((r) => !nextByUid.has(r.uid));
  const unblocked = next.filter(
    (r) => oldByUid.get(r.uid)?.blockOwnerDeletion === true && r.blockOwnerDeletion !== true,
  );
  return { added, removed, unblocked };
}
