// Ownership bookkeeping for one write (structured-merge-diff merge/update.go):
// who owns which fields after an update or an apply, the merged object of an
// apply, and the conflicts an apply runs into. Managers are keyed by an opaque
// identifier (the managed-fields layer uses upstream's JSON identifiers); each
// has a field set, the API version it was recorded at, and whether it applied.
//
// The object is in one version only. A manager recorded at another API version
// cannot be converted to it, which smd treats as a "missing version": such a
// manager is dropped from the comparison (and from the result) as upstream does.

import { FieldSet } from './field-set.js';
import { type Path } from './path.js';
import { type Atom } from './schema.js';
import {
  compareValuesTyped,
  ensureNamedFieldsAreMembers,
  mergeValues,
  removeItems,
  toFieldSet,
  type Comparison,
} from './typed.js';
import { equalValues, type Value } from './value.js';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Manager identifier -> what it owns. */
export type ManagedFieldSets = Map<string, VersionedSet>;

/** One field an apply would take from another manager. */
export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** The conflicts of an apply without force (smd merge.Conflicts). */
export class ConflictsError extends Error {
  override readonly name = 'ConflictsError';
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflict(s)`);
  }
}

export interface UpdaterOptions {
  /** The object's type. */
  readonly schema: Atom;
  /** The only API version objects exist in; managers at other versions are dropped. */
  readonly apiVersion: string;
  /** Fields a write at this endpoint never takes ownership of (upstream's reset fields). */
  readonly ignored?: FieldSet;
}

export interface UpdateResult {
  readonly managers: ManagedFieldSets;
}

export interface ApplyResult {
  /** The merged object, or undefined when the apply changes nothing. */
  readonly object: Value | undefined;
  readonly managers: ManagedFieldSets;
}

function versioned(set: FieldSet, apiVersion: string, applied: boolean): VersionedSet {
  return { set, apiVersion, applied };
}

function excludeIgnored(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (!ignored || ignored.empty()) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

export class Updater {
  private readonly schema: Atom;
  private readonly apiVersion: string;
  private readonly ignored: FieldSet | undefined;

  constructor(opts: UpdaterOptions) {
    this.schema = opts.schema;
    this.apiVersion = opts.apiVersion;
    this.ignored = opts.ignored;
  }

  /** Managers recorded at a version the object is not in cannot be compared: smd drops them. */
  private convertible(vs: VersionedSet): boolean {
    return vs.apiVersion === this.apiVersion;
  }

  /**
   * The shared step of update and apply: every other manager loses the fields
   * this write changed, added or removed; without force, changed or added fields
   * another manager owns are conflicts.
   */
  private reconcile(
    oldObject: Value,
    newObject: Value,
    managers: ManagedFieldSets,
    workflow: string,
    force: boolean,
  ): { managers: ManagedFieldSets; compare: Comparison } {
    const compare = excludeIgnored(compareValuesTyped(oldObject, newObject, this.schema), this.ignored);
    const out: ManagedFieldSets = new Map(managers);
    const conflicts = new Map<string, FieldSet>();
    const removed = new Map<string, FieldSet>();
    const changed = compare.modified.union(compare.added);
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      if (!this.convertible(vs)) {
        out.delete(manager);
        continue;
      }
      const conflictSet = vs.set.intersection(changed);
      if (!conflictSet.empty()) conflicts.set(manager, conflictSet);
      if (!compare.removed.empty()) removed.set(manager, compare.removed);
    }
    if (!force && conflicts.size > 0) {
      const list: Conflict[] = [];
      for (const [manager, set] of conflicts) for (const path of set.paths()) list.push({ manager, path });
      throw new ConflictsError(list);
    }
    for (const [manager, set] of conflicts) {
      const vs = out.get(manager) as VersionedSet;
      out.set(manager, versioned(vs.set.difference(set), vs.apiVersion, vs.applied));
    }
    for (const [manager, set] of removed) {
      const vs = out.get(manager) as VersionedSet;
      out.set(manager, versioned(vs.set.difference(set), vs.apiVersion, vs.applied));
    }
    for (const [manager, vs] of out) if (vs.set.empty()) out.delete(manager);
    return { managers: out, compare };
  }

  /**
   * A non-apply write (create, update, patch): the updater gains what it changed
   * or added, loses what it removed; others lose what it changed. Never conflicts.
   */
  update(liveObject: Value, newObject: Value, managers: ManagedFieldSets, manager: string): UpdateResult {
    const { managers: out, compare } = this.reconcile(liveObject, newObject, managers, manager, true);
    const previous = out.get(manager)?.set;
    // Removed first, then what changed or came (smd 4.4 merge/update.go): a key a
    // write duplicated is both removed (its fields) and added (the whole item), and
    // the item is the writer's.
    let set = (previous ? previous.difference(compare.removed) : new FieldSet())
      .union(compare.modified)
      .union(compare.added);
    if (this.ignored) set = set.recursiveDifference(this.ignored);
    if (set.empty()) out.delete(manager);
    else out.set(manager, versioned(set, this.apiVersion, false));
    return { managers: out };
  }

  /**
   * An apply: the configuration merged into the live object; the applier owns
   * exactly what it applied; what it applied last time and no longer applies is
   * removed unless someone else owns it. Throws ConflictsError unless `force`.
   */
  apply(
    liveObject: Value,
    config: Value,
    managers: ManagedFieldSets,
    manager: string,
    force: boolean,
  ): ApplyResult {
    let merged = mergeValues(liveObject, config, this.schema);
    const lastSet = managers.get(manager);
    let set = toFieldSet(config, this.schema);
    if (this.ignored) set = set.recursiveDifference(this.ignored);
    const withApplier: ManagedFieldSets = new Map(managers);
    withApplier.set(manager, versioned(set, this.apiVersion, true));
    merged = this.prune(merged, withApplier, manager, lastSet);
    const { managers: out } = this.reconcile(liveObject, merged, withApplier, manager, force);
    // "Nothing changed" is smd 4.4.2's value.Equals of the two objects (merge/update.go
    // Apply), not 4.1.2's empty comparison: an apply that only reorders a set or
    // list-map, or changes only fields no manager may own (a reset field such as
    // the main resource's status), changes the object.
    return { object: equalValues(liveObject, merged) ? undefined : merged, managers: out };
  }

  /**
   * Removes what the applier applied last time and not this time, unless another
   * manager (or this apply) owns it (smd prune, addBackOwnedItems, addBackDanglingItems).
   */
  private prune(
    merged: Value,
    managers: ManagedFieldSets,
    applier: string,
    lastSet: VersionedSet | undefined,
  ): Value {
    if (!lastSet || lastSet.set.empty()) return merged;
    if (!this.convertible(lastSet)) return merged;
    const sc = this.schema;
    const named = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, sc);
    let pruned = removeItems(merged, named(lastSet.set), sc);
    // Add back what any manager at this version owns.
    let managed: FieldSet | undefined;
    for (const vs of managers.values()) {
      if (!this.convertible(vs)) continue;
      managed = managed ? managed.union(vs.set) : vs.set;
    }
    if (managed) {
      const mergedSet = named(toFieldSet(merged, sc));
      const prunedSet = named(toFieldSet(pruned, sc));
      pruned = removeItems(merged, mergedSet.difference(prunedSet.union(named(managed))), sc);
    }
    void applier;
    // Only what the applier owned last time may go; anything else pruning took comes back.
    const prunedSet = named(toFieldSet(pruned, sc));
    const mergedSet = named(toFieldSet(merged, sc));
    const last = named(lastSet.set);
    return removeItems(merged, mergedSet.difference(prunedSet).intersection(last), sc);
  }
}
