// The field manager of one kind at one endpoint (main resource or a subresource):
// what the Store calls on every write. It is apimachinery's managedfields
// FieldManager with the wrappers upstream stacks around structured-merge-diff
// (NewDefaultFieldManager), outermost first:
//
//   decode/encode managedFields   reset with `managedFields: []` or `[{}]`; a write
//                                 that omits them keeps the live ones; subresource
//                                 writes never set them
//   version check (apply)         the applied apiVersion and kind must be the kind's
//   last-applied updater (apply)  kubectl's apply keeps its last-applied annotation current
//   last-applied manager (apply)  kubectl's first server-side apply over a client-side
//                                 applied object takes the fields it applied before
//   skip non-applied              untracked objects start tracking at their first
//                                 apply, under `before-first-apply` (or at create)
//   cap managers (update)         more than 10 Update entries fold the oldest into
//                                 `ancient-changes`
//   manager identifiers           manager name + operation (+ apiVersion for Update)
//                                 + subresource
//   managed-fields updater        an entry's time moves only when its write changed
//                                 something
//   strip meta                    apiVersion, kind and metadata's server fields are
//                                 never owned
//   structured merge              the Updater (updater.ts) on typed values
//
// Pure: no I/O; time comes from the `now` option. Inputs are never mutated.

import { ApiError, newBadRequest } from '../../apis/meta/errors.js';
import { isObject, type KubeObject, type ManagedFieldsEntry } from '../../apis/meta/types.js';
import { toApplyConflicts, ApplyConflictError } from './conflict.js';
import { FieldSet } from './field-set.js';
import {
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  ManagedFieldsError,
  type Managed,
} from './managed.js';
import { fieldElement, type Path } from './path.js';
import { fromOpenAPI, type Atom } from './schema.js';
import { TypedValueError } from './typed.js';
import { faultsMessage, validationFaults } from './validate.js';
import { ConflictsError, Updater, type ManagedFieldSets } from './updater.js';
import type { Value } from './value.js';
import { ANCIENT_CHANGES_MANAGER, capUpdateManagers, MAX_UPDATE_MANAGERS } from './cap-managers.js';
import {
  allowedConflictsFromLastApplied,
  buildLastApplied,
  KUBECTL_MANAGER,
  LAST_APPLIED_ANNOTATION,
} from './last-applied.js';
import { NOT_PLAIN, plainCopy, type CopyRules } from '../../util/plain-copy.js';
import { rfc3339Seconds } from '../../util/timestamp.js';

export { ANCIENT_CHANGES_MANAGER, LAST_APPLIED_ANNOTATION, MAX_UPDATE_MANAGERS };

export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';
/** The name the current write's fields are gathered under before they join its manager's entry. */
const CURRENT_OPERATION = 'current-operation';

/** Fields never owned by anyone (upstream stripMetaManager). */
export const NEVER_OWNED_FIELDS: readonly (readonly string[])[] = [
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'selfLink'],
  ['metadata', 'uid'],
  ['metadata', 'clusterName'],
  ['metadata', 'generation'],
  ['metadata', 'managedFields'],
  ['metadata', 'resourceVersion'],
];

/**
 * Fields a write through an endpoint never takes ownership of, as upstream's
 * strategies declare them (GetResetFields, as for custom resources): the main
 * resource does not own `status`, the status subresource does not own `spec`.
 */
export function defaultResetFields(subresource: string): readonly (readonly string[])[] {
  if (subresource === '') return [['status']];
  if (subresource === 'status') return [['spec']];
  return [];
}

function fieldPaths(paths: readonly (readonly string[])[]): FieldSet {
  return FieldSet.of(...paths.map((p): Path => p.map(fieldElement)));
}

export interface FieldManagerOptions {
  /** The kind's JSON schema (x-kubernetes-list-type and friends give merge semantics). */
  readonly schema: Readonly<Record<string, unknown>>;
  /** `<group>/<version>` of the kind: recorded in entries and required of applied objects. */
  readonly apiVersion: string;
  readonly kind: string;
  /** '' for the main resource, else the subresource (`status`). */
  readonly subresource?: string;
  /** Field-name paths this endpoint never owns; defaults to defaultResetFields(subresource). */
  readonly resetFields?: readonly (readonly string[])[];
  /** The clock for entries' `time` (second precision, UTC). */
  readonly now?: () => Date;
}

/** A failure of the engine itself, not of the request (upstream returns these as 500s). */
export class FieldManagerError extends ApiError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, '', message, undefined, options);
  }
}

const JSON_COPY: CopyRules = { json: true };

/**
 * The JSON round trip of `v` (what the engine works on: no undefined members, no
 * class instances). Plain data is copied without printing and parsing it, which a
 * create paid three times on ~1 KiB; anything else takes the round trip itself.
 */
function clone<T>(v: T): T {
  const copy = plainCopy(v, JSON_COPY);
  return copy === NOT_PLAIN ? (JSON.parse(JSON.stringify(v)) as T) : (copy as T);
}

/** Past this many distinct managers, an instance's identifier memo starts over (names come from clients). */
const IDENTIFIER_MEMO_LIMIT = 256;

interface Outcome {
  object: KubeObject;
  managed: Managed;
}

export class FieldManager {
  private readonly atom: Atom;
  private readonly updater: Updater;
  private readonly apiVersion: string;
  private readonly kind: string;
  private readonly subresource: string;
  private readonly now: () => Date;
  private readonly stripSet = fieldPaths(NEVER_OWNED_FIELDS);
  /** Manager identifiers by operation and manager name: the same few JSON strings on every write. */
  private readonly identifiers = { Apply: new Map<string, string>(), Update: new Map<string, string>() };

  constructor(opts: FieldManagerOptions) {
    this.atom = fromOpenAPI(opts.schema, opts.kind);
    this.apiVersion = opts.apiVersion;
    this.kind = opts.kind;
    this.subresource = opts.subresource ?? '';
    this.now = opts.now ?? (() => new Date());
    const reset = opts.resetFields ?? defaultResetFields(this.subresource);
    this.updater = new Updater({
      schema: this.atom,
      apiVersion: this.apiVersion,
      ...(reset.length > 0 ? { ignored: fieldPaths(reset) } : {}),
    });
  }

  /**
   * A non-apply write (create, update, patch) by `manager`: returns `newObj` with
   * its managedFields brought up to date. For a create, `liveObj` is an object of
   * the kind with empty metadata (no uid). Throws FieldManagerError when the
   * objects do not fit the schema.
   */
  update(liveObj: KubeObject, newObj: KubeObject, manager: string): KubeObject {
    const managed = this.decodeLiveOrNew(liveObj, newObj);
    const next = clone(newObj);
    delete next.metadata.managedFields;
    const out = this.skipNonAppliedUpdate(liveObj, next, managed, manager);
    return this.withManagedFields(out.object, out.managed);
  }

  /** update(), but on an engine failure the live object's managedFields are kept (upstream UpdateNoErrors). */
  updateNoErrors(liveObj: KubeObject, newObj: KubeObject, manager: string): KubeObject {
    try {
      return this.update(liveObj, newObj, manager);
    } catch {
      const next = clone(newObj);
      if (liveObj.metadata.managedFields) next.metadata.managedFields = clone(liveObj.metadata.managedFields);
      else delete next.metadata.managedFields;
      return next;
    }
  }

  /**
   * A server-side apply of `applied` by `manager`: returns the merged object with
   * its managedFields. When the apply changes nothing, the result equals the live
   * object except (possibly) its managedFields. Throws ApplyConflictError (409)
   * unless `force`, ApiError 400 for an applied object of another kind or one that
   * carries managedFields, FieldManagerError when objects do not fit the schema.
   */
  apply(
    liveObj: KubeObject,
    applied: Readonly<Record<string, unknown>>,
    manager: string,
    force: boolean,
  ): KubeObject {
    let managed: Managed;
    try {
      managed = decodeManagedFields(liveObj.metadata.managedFields);
    } catch (err) {
      throw new FieldManagerError(`failed to decode managed fields: ${(err as Error).message}`, {
        cause: err,
      });
    }
    // Version check.
    const gotVersion = typeof applied['apiVersion'] === 'string' ? applied['apiVersion'] : '';
    const gotKind = typeof applied['kind'] === 'string' ? applied['kind'] : '';
    if (gotVersion !== this.apiVersion || gotKind !== this.kind) {
      throw newBadRequest(`invalid object type: ${gvkString(gotVersion, gotKind)}`);
    }
    const out = this.lastAppliedApply(liveObj, applied, managed, manager, force);
    return this.withManagedFields(out.object, out.managed);
  }

  // ---- decoding and encoding ---------------------------------------------------------

  private decodeLiveOrNew(liveObj: KubeObject, newObj: KubeObject): Managed {
    const fromLive = (): Managed => {
      try {
        return decodeManagedFields(liveObj.metadata.managedFields);
      } catch {
        return emptyManaged();
      }
    };
    // A subresource write never sets managedFields through its body.
    if (this.subresource !== '') return fromLive();
    const requested = newObj.metadata.managedFields;
    if (isResetManagedFields(requested)) return emptyManaged();
    try {
      const managed = decodeManagedFields(requested);
      // Clients that do not know managedFields must not erase them by omission.
      return managed.fields.size === 0 ? fromLive() : managed;
    } catch {
      return fromLive();
    }
  }

  private withManagedFields(obj: KubeObject, managed: Managed): KubeObject {
    const entries: ManagedFieldsEntry[] | undefined = encodeManagedFields(managed);
    if (entries) obj.metadata.managedFields = entries;
    else delete obj.metadata.managedFields;
    return obj;
  }

  // ---- last-applied (kubectl's client-side apply) ---------------------------------------

  private lastAppliedApply(
    liveObj: KubeObject,
    applied: Readonly<Record<string, unknown>>,
    managed: Managed,
    manager: string,
    force: boolean,
  ): Outcome {
    const out = this.upgradeFromClientSideApply(liveObj, applied, managed, manager, force);
    // Keep kubectl's annotation in step with what its server-side apply applied.
    const annotations = out.object.metadata.annotations;
    if (manager === KUBECTL_MANAGER && annotations?.[LAST_APPLIED_ANNOTATION]) {
      annotations[LAST_APPLIED_ANNOTATION] = buildLastApplied(applied);
    }
    return out;
  }

  private upgradeFromClientSideApply(
    liveObj: KubeObject,
    applied: Readonly<Record<string, unknown>>,
    managed: Managed,
    manager: string,
    force: boolean,
  ): Outcome {
    try {
      return this.skipNonAppliedApply(liveObj, applied, managed, manager, force);
    } catch (err) {
      if (manager !== KUBECTL_MANAGER || !(err instanceof ApplyConflictError)) throw err;
      const allowed = allowedConflictsFromLastApplied(liveObj, this.apiVersion, this.atom);
      if (!allowed) throw err;
      const remaining = err.conflicts.filter((c) => !allowed.has(c.path));
      if (remaining.length > 0) throw new ApplyConflictError(remaining);
      return this.skipNonAppliedApply(liveObj, applied, managed, manager, true);
    }
  }

  // ---- skip non-applied -----------------------------------------------------------------

  private skipNonAppliedUpdate(
    liveObj: KubeObject,
    newObj: KubeObject,
    managed: Managed,
    manager: string,
  ): Outcome {
    // An existing object nobody tracks stays untracked until its first apply; a
    // create starts tracking (upstream's track-on-create probability is 1).
    if (managed.fields.size === 0 && liveObj.metadata.uid) return { object: newObj, managed };
    return this.capManagersUpdate(liveObj, newObj, managed, manager);
  }

  private skipNonAppliedApply(
    liveObj: KubeObject,
    applied: Readonly<Record<string, unknown>>,
    managed: Managed,
    manager: string,
    force: boolean,
  ): Outcome {
    let live = liveObj;
    let current = managed;
    if (current.fields.size === 0) {
      // What the object holds before its first apply belongs to before-first-apply.
      const empty: KubeObject = { apiVersion: this.apiVersion, kind: this.kind, metadata: {} };
      // A copy: the typed update reads its new object as the plain data it is handed.
      let out: Outcome;
      try {
        out = this.capManagersUpdate(empty, clone(liveObj), current, BEFORE_FIRST_APPLY_MANAGER);
      } catch (err) {
        // skipnonapplied.go's words around the update's own.
        if (!(err instanceof FieldManagerError)) throw err;
        throw new FieldManagerError(`failed to create manager for existing fields: ${err.message}`, {
          cause: err,
        });
      }
      live = out.object;
      current = out.managed;
    }
    return this.identifiedApply(live, applied, current, manager, force);
  }

  // ---- cap managers ---------------------------------------------------------------------

  private capManagersUpdate(
    liveObj: KubeObject,
    newObj: KubeObject,
    managed: Managed,
    manager: string,
  ): Outcome {
    const out = this.identifiedUpdate(liveObj, newObj, managed, manager);
    capUpdateManagers(out.managed, MAX_UPDATE_MANAGERS);
    return out;
  }

  // ---- manager identifiers, times, strip meta, structured merge ----------------------------

  private identifier(manager: string, operation: 'Apply' | 'Update'): string {
    const memo = this.identifiers[operation];
    let id = memo.get(manager);
    if (id === undefined) {
      id = managerIdentifier({
        manager: manager === '' ? 'unknown' : manager,
        operation,
        apiVersion: this.apiVersion,
        subresource: this.subresource,
      });
      if (memo.size >= IDENTIFIER_MEMO_LIMIT) memo.clear();
      memo.set(manager, id);
    }
    return id;
  }

  private identifiedUpdate(
    liveObj: KubeObject,
    newObj: KubeObject,
    managed: Managed,
    manager: string,
  ): Outcome {
    const id = this.identifier(manager, 'Update');
    const fields = this.typedUpdate(liveObj, newObj, managed.fields, CURRENT_OPERATION);
    const current = fields.get(CURRENT_OPERATION);
    const times = new Map(managed.times);
    if (current) {
      // The write changed something: its fields join the manager's entry, whose time moves.
      fields.delete(CURRENT_OPERATION);
      const previous = fields.get(id);
      fields.set(id, {
        set: previous ? current.set.union(previous.set) : current.set,
        apiVersion: current.apiVersion,
        applied: current.applied,
      });
      times.set(id, rfc3339Seconds(this.now()));
    }
    return { object: newObj, managed: { fields, times } };
  }

  private identifiedApply(
    liveObj: KubeObject,
    applied: Readonly<Record<string, unknown>>,
    managed: Managed,
    manager: string,
    force: boolean,
  ): Outcome {
    const id = this.identifier(manager, 'Apply');
    if (applied['metadata'] && (applied['metadata'] as Record<string, unknown>)['managedFields'] != null) {
      throw newBadRequest('metadata.managedFields must be nil');
    }
    // structuredmerge.go makes typed values of both objects before merging: the
    // configuration as smd parses it (a repeated key refused), then the live object
    // (repeated keys allowed). Their faults are named here, as upstream words them.
    const config = clone(applied) as unknown as Value;
    this.refuseUnfit('failed to create typed patch object', applied, config, false);
    const live = clone(liveObj) as unknown as Value;
    // Upstream's FieldManager.Apply takes managedFields off the live object before this
    // (k8s.io/apimachinery managedfields/internal/fieldmanager.go: DecodeObjectManagedFields,
    // then RemoveObjectManagedFields(liveObj), then the structured merge), as Update does
    // for both objects: they are not checked, and walking them cost most of the check.
    this.refuseUnfit('failed to create typed live object', liveObj, withoutManagedFields(live), true);
    let result;
    try {
      result = this.updater.apply(live, config, managed.fields, id, force);
    } catch (err) {
      if (err instanceof ConflictsError) throw new ApplyConflictError(toApplyConflicts(err.conflicts));
      // What else smd's Apply can fail on comes back unwrapped but for its step's words.
      if (err instanceof TypedValueError)
        throw new FieldManagerError(`failed to merge config: ${err.message}`, { cause: err });
      throw this.engineError(liveObj, err);
    }
    const fields = this.stripped(result.managers, id);
    const times = new Map(managed.times);
    let object: KubeObject;
    if (result.object !== undefined) {
      object = result.object as unknown as KubeObject;
      times.set(id, rfc3339Seconds(this.now()));
    } else {
      object = clone(liveObj);
      delete object.metadata.managedFields;
    }
    return { object, managed: { fields, times } };
  }

  private typedUpdate(
    liveObj: KubeObject,
    newObj: KubeObject,
    managers: ManagedFieldSets,
    id: string,
  ): ManagedFieldSets {
    const live = clone(liveObj) as unknown as Value;
    // Not copied again: both callers hand a fresh plain copy (update()'s `next`, the
    // first apply's copy of the live object), and the engine only reads it.
    const next = newObj as unknown as Value;
    try {
      return this.stripped(this.updater.update(live, next, managers, id).managers, id);
    } catch (err) {
      // Only a failure pays for naming it: structuredmerge.go's Update makes typed
      // values of the new object, then the live one, then updates the managers.
      this.refuseUnfit('failed to convert new object', newObj, next, true, ' to smd typed');
      this.refuseUnfit('failed to convert live object', liveObj, live, true, ' to smd typed');
      throw this.engineError(newObj, err, 'failed to update ManagedFields');
    }
  }

  /**
   * Throws upstream's error for an object that does not fit the kind's schema:
   * `<what> (<namespace>/<name>; <group/version>, Kind=<Kind>)<after>: <smd's faults>`
   * (structuredmerge.go's objectGVKNN, which names the object by its own metadata).
   */
  private refuseUnfit(
    what: string,
    obj: Readonly<Record<string, unknown>> | KubeObject,
    v: Value,
    allowDuplicates: boolean,
    after = '',
  ): void {
    const faults = validationFaults(v, this.atom, allowDuplicates);
    if (faults.length === 0) return;
    throw new FieldManagerError(`${what} (${this.gvknn(obj)})${after}: ${faultsMessage(faults)}`);
  }

  /** objectGVKNN: `<namespace>/<name>; <group/version>, Kind=<Kind>`. */
  private gvknn(obj: Readonly<Record<string, unknown>> | KubeObject): string {
    const meta: Record<string, unknown> = isObject(obj['metadata']) ? obj['metadata'] : {};
    const text = (v: unknown): string => (typeof v === 'string' ? v : '');
    return `${text(meta['namespace'])}/${text(meta['name'])}; ${gvkString(this.apiVersion, this.kind)}`;
  }

  /** Drops the never-owned fields from a manager's set (and the manager when nothing is left). */
  private stripped(managers: ManagedFieldSets, id: string): ManagedFieldSets {
    const vs = managers.get(id);
    if (!vs) return managers;
    const set = vs.set.difference(this.stripSet);
    if (set.empty()) managers.delete(id);
    else managers.set(id, { ...vs, set });
    return managers;
  }

  private engineError(obj: KubeObject, err: unknown, what?: string): Error {
    if (err instanceof ApiError) return err;
    if (what && (err instanceof TypedValueError || err instanceof ManagedFieldsError))
      return new FieldManagerError(`${what} (${this.gvknn(obj)}): ${err.message}`, { cause: err });
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The object with no metadata.managedFields: a shallow view, the object is not changed. */
function withoutManagedFields(v: Value): Value {
  if (!isObject(v) || !isObject(v['metadata']) || !('managedFields' in v['metadata'])) return v;
  const { managedFields: _dropped, ...metadata } = v['metadata'];
  return { ...v, metadata } as Value;
}

/** Go's GroupVersionKind String(): `group/version, Kind=Kind`. */
function gvkString(apiVersion: string, kind: string): string {
  const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return `${gv}, Kind=${kind}`;
}
