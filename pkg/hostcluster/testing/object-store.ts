// TEST DOUBLE. The host double's storage: objects by resource, namespace and name,
// one revision counter for everything (as etcd's), an event log so watches can
// start from any revision still kept, and a compaction point behind which a watch
// gets 410 Gone - the behaviours a client's list-then-watch loop depends on.

import { randomUUID } from 'node:crypto';

export type StoredObject = Record<string, unknown> & {
  metadata: Record<string, unknown> & { name: string; namespace?: string; resourceVersion?: string };
};

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly revision: number;
  readonly type: EventType;
  readonly resource: string;
  readonly namespace: string;
  readonly object: StoredObject;
}

export interface WatchFilter {
  readonly resource: string;
  /** '' for cluster-scoped resources or every namespace. */
  readonly namespace: string;
  /** Only this name, when set (fieldSelector metadata.name=...). */
  readonly name?: string;
}

type Listener = (event: StoreEvent) => void;

export class ObjectStore {
  private revision = 1;
  private compacted = 0;
  private readonly objects = new Map<string, { resource: string; obj: StoredObject }>();
  private readonly log: StoreEvent[] = [];
  private readonly listeners = new Set<{ filter: WatchFilter; listener: Listener }>();

  get currentRevision(): number {
    return this.revision;
  }

  get compactedRevision(): number {
    return this.compacted;
  }

  get(resource: string, namespace: string, name: string): StoredObject | undefined {
    const entry = this.objects.get(key(resource, namespace, name));
    return entry ? clone(entry.obj) : undefined;
  }

  list(filter: WatchFilter): StoredObject[] {
    const out: StoredObject[] = [];
    for (const { resource, obj } of this.objects.values())
      if (matches(filter, resource, obj)) out.push(clone(obj));
    return out.sort((a, b) =>
      `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(
        `${b.metadata.namespace ?? ''}/${b.metadata.name}`,
      ),
    );
  }

  /** Stores a new object; returns it with uid, resourceVersion and creationTimestamp, or undefined when the name is taken. */
  create(resource: string, obj: StoredObject): StoredObject | undefined {
    const ns = obj.metadata.namespace ?? '';
    const k = key(resource, ns, obj.metadata.name);
    if (this.objects.has(k)) return undefined;
    const stored = clone(obj);
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return this.write('ADDED', resource, k, stored);
  }

  /** Replaces an existing object (the caller checked preconditions); keeps uid and creationTimestamp. */
  update(resource: string, obj: StoredObject): StoredObject | undefined {
    const ns = obj.metadata.namespace ?? '';
    const k = key(resource, ns, obj.metadata.name);
    const current = this.objects.get(k)?.obj;
    if (!current) return undefined;
    const stored = clone(obj);
    stored.metadata.uid = current.metadata.uid;
    stored.metadata.creationTimestamp = current.metadata.creationTimestamp;
    return this.write('MODIFIED', resource, k, stored);
  }

  delete(resource: string, namespace: string, name: string): StoredObject | undefined {
    const k = key(resource, namespace, name);
    const current = this.objects.get(k)?.obj;
    if (!current) return undefined;
    this.objects.delete(k);
    const deleted = clone(current);
    this.revision++;
    deleted.metadata.resourceVersion = String(this.revision);
    this.emit({ revision: this.revision, type: 'DELETED', resource, namespace, object: deleted });
    return clone(deleted);
  }

  /** Forgets history up to now: watches from an older revision get 410 Gone. */
  compact(): void {
    this.compacted = this.revision;
    this.log.length = 0;
  }

  /** Events after `revision` that match; undefined when that history was compacted away. */
  eventsSince(filter: WatchFilter, revision: number): StoreEvent[] | undefined {
    if (revision < this.compacted) return undefined;
    return this.log.filter((e) => e.revision > revision && matches(filter, e.resource, e.object));
  }

  subscribe(filter: WatchFilter, listener: Listener): () => void {
    const entry = { filter, listener };
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  private write(type: EventType, resource: string, k: string, obj: StoredObject): StoredObject {
    this.revision++;
    obj.metadata.resourceVersion = String(this.revision);
    this.objects.set(k, { resource, obj });
    this.emit({
      revision: this.revision,
      type,
      resource,
      namespace: obj.metadata.namespace ?? '',
      object: clone(obj),
    });
    return clone(obj);
  }

  private emit(event: StoreEvent): void {
    this.log.push(event);
    for (const { filter, listener } of [...this.listeners]) {
      if (matches(filter, event.resource, event.object)) listener(event);
    }
  }
}

function key(resource: string, namespace: string, name: string): string {
  return `${resource}/${namespace}/${name}`;
}

function matches(filter: WatchFilter, resource: string, obj: StoredObject): boolean {
  if (filter.resource !== resource) return false;
  if (filter.namespace !== '' && (obj.metadata.namespace ?? '') !== filter.namespace) return false;
  if (filter.name !== undefined && obj.metadata.name !== filter.name) return false;
  return true;
}

function clone(obj: StoredObject): StoredObject {
  return structuredClone(obj);
}
