// The garbage collector's workers (kube-controller-manager garbagecollector.go):
// attemptToDelete decides, from the live object and its owners, whether an object
// is garbage (every owner gone: deleted, or re-created under a new uid), must wait,
// or must drop references to owners that are gone; it also finishes foreground
// deletions once no blocking dependent is left. attemptToOrphan removes an owner's
// reference from every dependent, then the owner's orphan finalizer. Failed items
// are retried with backoff.

import { isApiError } from '../../apis/meta/errors.js';
import type { KubeObject, OwnerReference, PropagationPolicy } from '../../apis/meta/types.js';
import { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from '../../apis/meta/validation.js';
import type { Logger } from '../../util/log/index.js';
import {
  garbageCollectorAttempts,
  garbageCollectorDeletedObjects,
  garbageCollectorOrphanedDependents,
  reportWorkQueue,
  workqueueAdds,
  workqueueRetries,
} from '../../metrics/garbage-collector.js';
import type { GarbageCollectorClient } from './client.js';
import { GraphBuilder } from './graph-builder.js';
import type { GraphNode, ObjectIdentity } from './graph.js';
import { InvalidOwnerReferences, type InvalidReason } from './invalid-references.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';

/** The queues' names, as kube-controller-manager names the collector's (workqueue_* metrics). */
const ATTEMPT_TO_DELETE = 'garbage_collector_attempt_to_delete';
const ATTEMPT_TO_ORPHAN = 'garbage_collector_attempt_to_orphan';

function instrumentedQueue(name: string, options: WorkQueueOptions): WorkQueue<GraphNode> {
  const added = workqueueAdds.labels({ name });
  const retried = workqueueRetries.labels({ name });
  const queue = new WorkQueue<GraphNode>({
    ...options,
    metrics: { added: () => added.inc(), retried: () => retried.inc() },
  });
  reportWorkQueue(name, queue);
  return queue;
}

export interface GarbageCollectorOptions {
  readonly client: GarbageCollectorClient;
  readonly logger?: Logger;
  /** Workers per queue (upstream: --concurrent-gc-syncs, 20). */
  readonly workers?: number;
  /** Longest retry backoff of a failed item. */
  readonly maxRetryDelayMs?: number;
}

/** How many times a finalizer removal or an owner-reference removal retries a conflict at once. */
const CONFLICT_RETRIES = 5;

interface Classified {
  solid: OwnerReference[];
  dangling: OwnerReference[];
  waiting: OwnerReference[];
  invalid: boolean;
}

export class GarbageCollector {
  readonly builder: GraphBuilder;
  readonly invalidReferences: InvalidOwnerReferences;
  private readonly attemptToDelete: WorkQueue<GraphNode>;
  private readonly attemptToOrphan: WorkQueue<GraphNode>;
  private readonly client: GarbageCollectorClient;
  private readonly logger: Logger | undefined;
  private readonly workers: number;
  private loops: Promise<void>[] = [];

  constructor(options: GarbageCollectorOptions) {
    const queueOptions = { baseDelayMs: 50, maxDelayMs: options.maxRetryDelayMs ?? 30_000 };
    this.attemptToDelete = instrumentedQueue(ATTEMPT_TO_DELETE, queueOptions);
    this.attemptToOrphan = instrumentedQueue(ATTEMPT_TO_ORPHAN, queueOptions);
    this.client = options.client;
    this.logger = options.logger;
    this.workers = options.workers ?? 2;
    this.builder = new GraphBuilder(options.client, this.attemptToDelete, this.attemptToOrphan);
    this.invalidReferences = new InvalidOwnerReferences(options.logger);
  }

  /** Starts the workers; idempotent. Feed the graph through `builder`. */
  run(): void {
    if (this.loops.length > 0) return;
    for (let i = 0; i < this.workers; i++) {
      this.loops.push(this.work(ATTEMPT_TO_DELETE, this.attemptToDelete, (n) => this.attemptToDeleteItem(n)));
      this.loops.push(this.work(ATTEMPT_TO_ORPHAN, this.attemptToOrphan, (n) => this.attemptToOrphanItem(n)));
    }
  }

  /** Stops taking work and waits for the items in hand. */
  async stop(): Promise<void> {
    this.attemptToDelete.shutDown();
    this.attemptToOrphan.shutDown();
    await Promise.all(this.loops);
  }

  private async work(
    name: string,
    queue: WorkQueue<GraphNode>,
    process: (n: GraphNode) => Promise<void>,
  ): Promise<void> {
    for (;;) {
      const node = await queue.get();
      if (node === undefined) return;
      try {
        await process(node);
        queue.forget(node);
        garbageCollectorAttempts.inc({ queue: name, result: 'success' });
      } catch (err) {
        garbageCollectorAttempts.inc({ queue: name, result: 'error' });
        this.logger?.warn('garbage collector: will retry', {
          object: { ...node.identity },
          error: err instanceof Error ? err.message : String(err),
        });
        queue.addRateLimited(node);
      } finally {
        queue.done(node);
      }
    }
  }

  // ---- attemptToDelete ---------------------------------------------------------

  private async attemptToDeleteItem(node: GraphNode): Promise<void> {
    if (!node.observed) return this.checkVirtualNode(node);
    // Being deleted is a one-way trip: its dependents are handled once it is gone.
    if (node.beingDeleted && !node.deletingDependents) return;
    const latest = await this.client.get(node.identity);
    // Gone or re-created: the watch brings the delete, which queues what depends on it.
    if (!latest || latest.metadata.uid !== node.identity.uid) return;
    if (node.deletingDependents) return this.processDeletingDependents(node);

    const refs = latest.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const { solid, dangling, waiting, invalid } = await this.classify(node.identity, refs);
    // Upstream stops at an owner it cannot resolve; it never deletes because of one.
    if (invalid) return;
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      // References to owners that are gone, or that wait for their dependents, must go,
      // or those owners would wait for this object forever.
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.removeOwnerReferences(node.identity, (ref) => drop.has(ref.uid));
      return;
    }
    if (waiting.length > 0 && node.dependents.size > 0) {
      if ([...node.dependents].some((d) => d.deletingDependents)) {
        // A possible cycle: stop blocking the owners, then delete in the foreground.
        await this.unblockOwnerReferences(node.identity);
      }
      await this.deleteObject(node.identity, latest, 'Foreground');
      return;
    }
    // No owner is left: garbage. Honour a deletion finalizer it already has.
    const finalizers = latest.metadata.finalizers ?? [];
    const policy: PropagationPolicy = finalizers.includes(FINALIZER_ORPHAN)
      ? 'Orphan'
      : finalizers.includes(FINALIZER_FOREGROUND)
        ? 'Foreground'
        : 'Background';
    this.logger?.info('garbage collector: deleting an object whose owners are gone', {
      object: { ...node.identity },
      propagationPolicy: policy,
    });
    await this.deleteObject(node.identity, latest, policy);
  }

  /** A node known only from references: when no such object exists, its dependents are re-examined. */
  private async checkVirtualNode(node: GraphNode): Promise<void> {
    const { apiVersion, kind } = node.identity;
    // Unresolvable owners are reported by their dependents' classification.
    if (this.client.namespaced(apiVersion, kind) === undefined) {
      for (const dep of node.dependents) this.attemptToDelete.add(dep);
      return;
    }
    const latest = await this.client.get(node.identity);
    if (latest && latest.metadata.uid === node.identity.uid) return;
    this.builder.removeVirtual(node);
  }

  private async processDeletingDependents(node: GraphNode): Promise<void> {
    const blocking = node.blockingDependents();
    if (blocking.length === 0) {
      await this.removeFinalizer(node.identity, FINALIZER_FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.attemptToDelete.add(dep);
  }

  /** garbagecollector.go classifyReferences with isDangling's live lookups. */
  private async classify(dependent: ObjectIdentity, refs: readonly OwnerReference[]): Promise<Classified> {
    const out: Classified = { solid: [], dangling: [], waiting: [], invalid: false };
    for (const ref of refs) {
      const reason = this.invalidReason(dependent, ref);
      if (reason) {
        this.invalidReferences.report(dependent, ref, reason);
        out.invalid = true;
        continue;
      }
      const namespaced = this.client.namespaced(ref.apiVersion, ref.kind) === true;
      const owner = await this.client.get({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: namespaced ? dependent.namespace : '',
        name: ref.name,
        uid: ref.uid,
      });
      if (!owner || owner.metadata.uid !== ref.uid) out.dangling.push(ref);
      else if (
        owner.metadata.deletionTimestamp &&
        (owner.metadata.finalizers ?? []).includes(FINALIZER_FOREGROUND)
      )
        out.waiting.push(ref);
      else out.solid.push(ref);
    }
    return out;
  }

  private invalidReason(dependent: ObjectIdentity, ref: OwnerReference): InvalidReason | undefined {
    const namespaced = this.client.namespaced(ref.apiVersion, ref.kind);
    if (namespaced === undefined) return 'OwnerKindNotServed';
    if (namespaced && dependent.namespace === '') return 'ClusterScopedDependentOfNamespacedOwner';
    if (namespaced && this.builder.isCrossNamespace(dependent.uid, ref.uid)) return 'OwnerInOtherNamespace';
    return undefined;
  }

  /**
   * Deletes with the uid and resourceVersion the decision was made on
   * (operations.go deleteObject); when only an unrelated field changed since,
   * the delete is retried with the uid alone.
   */
  private async deleteObject(
    id: ObjectIdentity,
    latest: KubeObject,
    policy: PropagationPolicy,
  ): Promise<void> {
    const resourceVersion = latest.metadata.resourceVersion;
    try {
      await this.client.delete(id, {
        preconditions: { uid: id.uid, ...(resourceVersion ? { resourceVersion } : {}) },
        propagationPolicy: policy,
      });
      garbageCollectorDeletedObjects.inc({ propagation_policy: policy });
    } catch (err) {
      if (isApiError(err) && err.reason === 'NotFound') return;
      if (!isApiError(err) || err.reason !== 'Conflict' || !resourceVersion) throw err;
      const live = await this.client.get(id);
      if (!live || live.metadata.uid !== id.uid) return;
      if (
        JSON.stringify(live.metadata.ownerReferences ?? []) !==
        JSON.stringify(latest.metadata.ownerReferences ?? [])
      )
        throw err;
      await this.client.delete(id, { preconditions: { uid: id.uid }, propagationPolicy: policy });
      garbageCollectorDeletedObjects.inc({ propagation_policy: policy });
    }
  }

  // ---- attemptToOrphan ---------------------------------------------------------

  private async attemptToOrphanItem(owner: GraphNode): Promise<void> {
    const failures: string[] = [];
    for (const dep of [...owner.dependents]) {
      try {
        if (await this.removeOwnerReferences(dep.identity, (ref) => ref.uid === owner.identity.uid))
          garbageCollectorOrphanedDependents.inc();
      } catch (err) {
        failures.push(`${dep.identity.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0) throw new Error(`orphaning the dependents failed: ${failures.join('; ')}`);
    await this.removeFinalizer(owner.identity, FINALIZER_ORPHAN);
  }

  // ---- writes ------------------------------------------------------------------

  /** Drops the matching owner references with a merge patch that carries the resourceVersion read. */
  private removeOwnerReferences(id: ObjectIdentity, drop: (ref: OwnerReference) => boolean): Promise<boolean> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      const kept = refs.filter((r) => !drop(r));
      return kept.length === refs.length ? undefined : { ownerReferences: kept.length > 0 ? kept : null };
    });
  }

  /** Sets blockOwnerDeletion false on every reference (patch.go unblockOwnerReferences). */
  private unblockOwnerReferences(id: ObjectIdentity): Promise<boolean> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      if (!refs.some((r) => r.blockOwnerDeletion === true)) return undefined;
      return { ownerReferences: refs.map((r) => ({ ...r, blockOwnerDeletion: false })) };
    });
  }

  /** operations.go removeFinalizer: a merge patch of the finalizers, with the resourceVersion read. */
  private removeFinalizer(id: ObjectIdentity, finalizer: string): Promise<boolean> {
    return this.patchMetadata(id, (meta) => {
      const finalizers = meta.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return undefined;
      const rest = finalizers.filter((f) => f !== finalizer);
      return { finalizers: rest.length > 0 ? rest : null };
    });
  }

  /**
   * Reads the object, asks `change` for the metadata to merge (undefined: nothing
   * to do), and patches with the resourceVersion read, retrying a conflict with a
   * fresh read. A vanished or re-created object needs nothing. True when it patched.
   */
  private async patchMetadata(
    id: ObjectIdentity,
    change: (meta: KubeObject['metadata']) => Record<string, unknown> | undefined,
  ): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const latest = await this.client.get(id);
      if (!latest || latest.metadata.uid !== id.uid) return false;
      const metadata = change(latest.metadata);
      if (!metadata) return false;
      try {
        await this.client.mergePatch(id, {
          metadata: { resourceVersion: latest.metadata.resourceVersion, ...metadata },
        });
        return true;
      } catch (err) {
        if (isApiError(err) && err.reason === 'NotFound') return false;
        if (!isApiError(err) || err.reason !== 'Conflict' || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }
}
