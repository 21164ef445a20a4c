// The owner/dependent graph (kube-controller-manager garbagecollector/graph.go):
// one node per uid, observed (seen in a watch) or virtual (named only by some
// dependent's ownerReference, existence not yet known). Edges run from an owner
// to the dependents that name its uid; a node keeps its own ownerReferences.

import type { OwnerReference } from '../../apis/meta/types.js';

/** Who an object is: enough to read, patch or delete it. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export class GraphNode {
  identity: ObjectIdentity;
  owners: OwnerReference[] = [];
  readonly dependents = new Set<GraphNode>();
  /** False for a node known only from an ownerReference. */
  observed: boolean;
  /** The object has a deletionTimestamp. */
  beingDeleted = false;
  /** The object has a deletionTimestamp and the foregroundDeletion finalizer. */
  deletingDependents = false;

  constructor(identity: ObjectIdentity, observed: boolean) {
    this.identity = identity;
    this.observed = observed;
  }

  /**
   * Dependents whose reference to this node has blockOwnerDeletion: a foreground
   * delete of this node waits for them (graph.go blockingDependents).
   */
  blockingDependents(): GraphNode[] {
    const uid = this.identity.uid;
    return [...this.dependents].filter((dep) =>
      dep.owners.some((ref) => ref.uid === uid && ref.blockOwnerDeletion === true),
    );
  }
}

/** The nodes by uid. */
export class Graph {
  private readonly nodes = new Map<string, GraphNode>();

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  add(node: GraphNode): void {
    this.nodes.set(node.identity.uid, node);
  }

  /** Removes the node and its edges from its owners (its own dependents keep their references). */
  remove(node: GraphNode): void {
    if (this.nodes.get(node.identity.uid) === node) this.nodes.delete(node.identity.uid);
    for (const ref of node.owners) this.nodes.get(ref.uid)?.dependents.delete(node);
  }

  /** Every observed node of one resource kind (for a relist's replace). */
  observedOf(apiVersion: string, kind: string): GraphNode[] {
    return [...this.nodes.values()].filter(
      (n) => n.observed && n.identity.apiVersion === apiVersion && n.identity.kind === kind,
    );
  }

  get size(): number {
    return this.nodes.size;
  }
}
