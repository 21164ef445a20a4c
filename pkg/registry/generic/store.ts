// The generic registry Store (k8s.io/apiserver pkg/registry/generic/registry/
// store.go with the request-side rules of pkg/registry/rest and
// pkg/endpoints/handlers): every stored kind gets create, get, list, update,
// patch, delete, deletecollection, watch and tables from here, and supplies
// only a Strategy. The Store knows no concrete kind and no storage backend.

import { randomUUID } from 'node:crypto';

import {
  ApiError,
  isApiError,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newGenerateNameConflict,
  newInvalid,
  newNotFound,
  OPTIMISTIC_LOCK_MESSAGE,
  type GroupKind,
  type GroupResource,
} from '../../apis/meta/errors.js';
import { invalid, type FieldError } from '../../apis/meta/field-errors.js';
import type {
  DeleteOptions,
  KubeList,
  KubeObject,
  ListMeta,
  ObjectMeta,
  Preconditions,
  Table,
} from '../../apis/meta/types.js';
import {
  isValidPathSegmentName,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../../apis/meta/validation.js';
import type { CompiledSchema } from '../../apis/schema/types.js';
import type { StorageDeadline } from '../../storage/deadline.js';
import { invalidObj, isStorageError } from '../../storage/errors.js';
import { isObject } from '../../apis/meta/types.js';
import { EventMemo, type Storage, type StorageWatchEvent, type Watcher } from '../../storage/interfaces.js';
import { decorateWatcher } from './decorated-watcher.js';
import type {
  Admission,
  CreateOptions,
  DeleteRequestOptions,
  DeleteResult,
  GetOptions,
  IncludeObject,
  ListOptions,
  PatchOptions,
  PatchType,
  RequestContext,
  ResourceInfo,
  RESTStorage,
  Strategy,
  SubresourceStorage,
  UpdateOptions,
} from '../rest/interfaces.js';
import { noteOutputOf, noteStateList } from './encoded.js';
import { decodeObject, type DecodeMode } from './decode.js';
import {
  checkDeletePreconditions,
  deletionFinalizers,
  markAsDeleting,
  validateDeleteOptions,
} from './delete.js';
import { interpretStorageError, type Operation } from './errors.js';
import { KeyFunctions } from './keys.js';
import {
  resourceVersionMatchOf,
  selectionPredicate,
  validateListOptions,
  type SelectionPredicate,
} from './list-options.js';
import { ApplyConflictError, FieldManager, restoreManagedFieldsIfInvalid } from '../fieldmanager/index.js';
import { managerName, requireApplyFieldManager, validateFieldManager } from './managed-fields.js';
import { generateName, MAX_NAME_GENERATION_ATTEMPTS, randomSuffix } from './names.js';
import { clone, nowTimestamp, sameContent, sameDesiredState, sameManagedFieldsButTimes } from './object.js';
import { applyPatch, preparePatch } from './patch.js';
import { keepAllButStatus, STATUS_SUBRESOURCE, statusSubresourceInfo } from './status.js';
import { convertToTable } from './table.js';

/** Who the server's own writes are made as (upstream's loopback client is system:apiserver). */
const SERVER_USER = { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] } as const;

/** How a write's managedFields come about: recorded as an Update, or already made by an apply. */
type ManagedFieldsMode = 'update' | 'applied';

export interface StoreOptions {
  readonly strategy: Strategy;
  readonly storage: Storage;
  /** The root of every key, e.g. `/registry`. */
  readonly keyPrefix: string;
  readonly compileSchema: (schema: Record<string, unknown>) => CompiledSchema;
  /** The clock (tests pin it). */
  readonly now?: () => Date;
  /** The random part of generated names (tests force collisions with it). */
  readonly randomSuffix?: () => string;
  /** Checks every create and update after validation, before storage (see Admission). */
  readonly admission?: Admission;
  /**
   * Subresource handlers (`users/<name>/accesskeys`), served beside the stored kind.
   * A kind with a status strategy gets `status` added to this map (a new one when absent).
   */
  readonly subresources?: Map<string, SubresourceStorage>;
  /**
   * Whether a garbage collector honours the orphan and foregroundDeletion
   * finalizers (apiserver's EnableGarbageCollection, default true). When none
   * does, a delete's propagationPolicy adds no finalizer and the object goes at once.
   */
  readonly garbageCollection?: boolean;
}

/** Which part of the object a write may change: all but status, or only status (`<resource>/status`). */
type WriteTarget = '' | typeof STATUS_SUBRESOURCE;

/** How many objects deletecollection reads per page (store.go deleteCollectionPageSize). */
const DELETE_COLLECTION_PAGE_SIZE = 10000;

/** Thrown inside an update to say "the finalizers are gone: delete it instead" (store.go errEmptiedFinalizers). */
const EMPTIED_FINALIZERS = Symbol('emptied finalizers');
/** Thrown inside a delete's update when no finalizer keeps the object (store.go errDeleteNow). */
const DELETE_NOW = Symbol('delete now');

/**
 * handlers/rest.go's two warnings for duplicate owner references: the first where
 * create and update dedup the request's object, before its write is recorded; the
 * second ("after mutating admission happens") where a patch or an apply dedups, the
 * only time it does (patch.go's dedupOwnerReferencesTransformer).
 */
const DUPLICATE_OWNER_REFERENCES_WARNING =
  '.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ';
const DUPLICATE_OWNER_REFERENCES_AFTER_MUTATING_ADMISSION_WARNING =
  '.metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ';

export class Store implements RESTStorage {
  readonly info: ResourceInfo;
  readonly schema: Record<string, unknown>;
  readonly subresources: ReadonlyMap<string, SubresourceStorage>;

  private readonly strategy: Strategy;
  private readonly storage: Storage;
  private readonly compiled: CompiledSchema;
  private readonly keys: KeyFunctions;
  private readonly gr: GroupResource;
  private readonly gk: GroupKind;
  private readonly apiVersion: string;
  private readonly now: () => Date;
  private readonly random: () => string;
  /** The memo key under which a shared watch event keeps this Store's decorated copy. */
  private readonly decoratedEvent = {};
  private readonly admission: Admission | undefined;
  /** The server-side apply engine for the main resource and for `status` (their reset fields differ). */
  private readonly fieldManagers: ReadonlyMap<WriteTarget, FieldManager>;
  private readonly garbageCollection: boolean;

  constructor(options: StoreOptions) {
    this.strategy = options.strategy;
    this.storage = options.storage;
    this.info = options.strategy.info;
    this.schema = options.strategy.schema;
    this.compiled = options.compileSchema(this.schema);
    this.keys = new KeyFunctions(
      options.keyPrefix,
      this.info.group,
      this.info.resource,
      this.info.namespaced,
    );
    this.gr = { group: this.info.group, resource: this.info.resource };
    this.gk = { group: this.info.group, kind: this.info.kind };
    this.apiVersion = this.info.group ? `${this.info.group}/${this.info.version}` : this.info.version;
    this.now = options.now ?? (() => new Date());
    this.random = options.randomSuffix ?? (() => randomSuffix());
    this.admission = options.admission;
    this.garbageCollection = options.garbageCollection ?? true;
    const fieldManager = (subresource: WriteTarget): FieldManager =>
      new FieldManager({
        schema: this.schema,
        apiVersion: this.apiVersion,
        kind: this.info.kind,
        subresource,
        now: () => this.now(),
      });
    const managers = new Map<WriteTarget, FieldManager>([['', fieldManager('')]]);
    if (this.strategy.status) managers.set(STATUS_SUBRESOURCE, fieldManager(STATUS_SUBRESOURCE));
    this.fieldManagers = managers;
    const subresources = options.subresources ?? new Map<string, SubresourceStorage>();
    if (this.strategy.status) subresources.set(STATUS_SUBRESOURCE, this.statusREST());
    this.subresources = subresources;
  }

  /** `<resource>/<name>/status` (upstream's StatusREST): get, update and patch of status alone. */
  private statusREST(): SubresourceStorage {
    return {
      info: statusSubresourceInfo(this.info),
      parentKind: true,
      get: (ctx, name, options) => this.get(ctx, name, options),
      update: (ctx, name, body, options) => this.updateTarget(ctx, name, body, options, STATUS_SUBRESOURCE),
      patch: (ctx, name, type, patch, options) =>
        this.patchTarget(ctx, name, type, patch, options, STATUS_SUBRESOURCE),
    };
  }

  // ---- create ----------------------------------------------------------------

  async create(ctx: RequestContext, body: unknown, options: CreateOptions): Promise<KubeObject> {
    validateFieldManager(options.fieldManager, 'CreateOptions');
    const decoded = this.decode(ctx, body, options.fieldValidation);
    this.ensureNamespace(ctx, decoded.metadata);
    this.dedupOwnerReferences(decoded, ctx.warnings);
    const manager = managerName(options.fieldManager, ctx.userAgent);
    const generate = !decoded.metadata.name && !!decoded.metadata.generateName;
    let lastError: unknown;
    for (let attempt = 0; attempt < (generate ? MAX_NAME_GENERATION_ATTEMPTS : 1); attempt++) {
      try {
        return await this.createOnce(ctx, clone(decoded), options, manager);
      } catch (err) {
        // Another name might be free: only a collision of a generated name is worth a retry.
        if (!generate || !isApiError(err) || err.reason !== 'AlreadyExists') throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  private async createOnce(
    ctx: RequestContext,
    obj: KubeObject,
    options: CreateOptions,
    manager: string,
    managedFields: ManagedFieldsMode = 'update',
  ): Promise<KubeObject> {
    const generated = !obj.metadata.name && !!obj.metadata.generateName;
    // What only the server may set: wiped, then filled (rest/meta.go).
    for (const f of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'selfLink',
    ] as const) {
      delete obj.metadata[f];
    }
    delete obj.metadata.resourceVersion;
    // The write is recorded as the request made it, before the strategy and admission
    // change it (create.go runs the field manager's UpdateNoErrors before BeforeCreate
    // and admission): a field the server sets is owned by no manager of this request.
    // The request's own managedFields count as upstream lets them (a valid list is kept);
    // as there, an engine failure drops them instead of failing the create.
    if (managedFields === 'update') obj = this.managerOf('').updateNoErrors(this.emptyObject(), obj, manager);
    const meta = obj.metadata;
    const now = nowTimestamp(this.now());
    meta.uid = randomUUID();
    meta.creationTimestamp = now;
    if (generated) meta.name = generateName(meta.generateName ?? '', this.random);
    meta.generation = 1;

    await this.strategy.prepareForCreate(ctx, obj);
    this.restoreEnvelope(obj);
    this.throwIfInvalid(obj.metadata.name ?? '', this.validateCreate(ctx, obj));
    await this.admit(ctx, obj, undefined);

    const name = obj.metadata.name ?? '';
    const key = this.keys.objectKey(obj.metadata.namespace ?? '', name);
    if (options.dryRun) {
      const existing = await this.storageCall(
        () => this.storage.get(key, { ignoreNotFound: true }, ctx.deadline),
        name,
        'get',
      );
      if (existing) throw this.alreadyExists(name, generated, existing);
      return this.output(obj, true, ctx);
    }
    try {
      return this.output(await this.storage.create(key, obj, ctx.deadline), true, ctx);
    } catch (err) {
      if (!isStorageError(err, 'KeyExists')) throw interpretStorageError(err, this.gr, name, 'create');
      const existing = await this.storage.get(key, { ignoreNotFound: true }, ctx.deadline).catch(() => null);
      throw this.alreadyExists(name, generated, existing);
    }
  }

  /** 409 for a taken name; a generated name says so, and a terminating holder is named (store.go create). */
  private alreadyExists(name: string, generated: boolean, existing: KubeObject | null): ApiError {
    const err = generated ? newGenerateNameConflict(this.gr, name, 1) : newAlreadyExists(this.gr, name);
    if (!existing?.metadata.deletionTimestamp) return err;
    return new ApiError(err.code, err.reason, `object is being deleted: ${err.message}`, err.details);
  }

  private validateCreate(ctx: RequestContext, obj: KubeObject): FieldError[] {
    const errs = validateObjectMeta(obj.metadata, this.info.namespaced);
    const schemaErrs = this.compiled.validate(obj);
    // The kind's own rules assume the types its schema promises.
    const kindErrs = schemaErrs.length > 0 ? [] : this.strategy.validate(ctx, obj);
    return [...errs, ...schemaErrs, ...kindErrs];
  }

  // ---- get / list / watch --------------------------------------------------

  async get(ctx: RequestContext, name: string, options: GetOptions): Promise<KubeObject> {
    const key = this.keys.objectKey(ctx.namespace, name);
    // storageCall inlined: one async frame and no closure on the hottest read.
    let obj: KubeObject | null;
    try {
      obj = await this.storage.get(key, { resourceVersion: options.resourceVersion ?? '' }, ctx.deadline);
    } catch (err) {
      throw interpretStorageError(err, this.gr, name, 'get');
    }
    if (!obj) throw newNotFound(this.gr, name);
    return this.output(obj, false);
  }

  async list(ctx: RequestContext, options: ListOptions): Promise<KubeList> {
    validateListOptions(options, false);
    const predicate = selectionPredicate(options);
    const target = this.listTarget(ctx.namespace, predicate, options.continue);
    const result = await this.storageCall(
      () =>
        this.storage.getList(
          target.key,
          {
            resourceVersion: options.resourceVersion ?? '',
            resourceVersionMatch: resourceVersionMatchOf(options),
            predicate,
            limit: options.limit ?? 0,
            continue: options.continue ?? '',
            recursive: target.recursive,
          },
          ctx.deadline,
        ),
      '',
      'list',
    );
    const metadata: ListMeta = { resourceVersion: result.resourceVersion };
    if (result.continue) metadata.continue = result.continue;
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
    return {
      kind: this.info.listKind,
      apiVersion: this.apiVersion,
      metadata,
      items: this.listItems(result.items),
    };
  }

  /**
   * A list's items as a client sees them. Cached states are deep-frozen, and those the
   * Store wrote already have this version's apiVersion and kind first: they are handed
   * out as they are, with no copy (their JSON is the memo's, written in chunks), when
   * every item is; otherwise each item is an output copy, as a get's.
   */
  private listItems(items: readonly KubeObject[]): KubeObject[] {
    if (!this.strategy.decorate && items.length > 0 && items.every((item) => this.inOutputForm(item))) {
      return noteStateList([...items]);
    }
    return items.map((item) => this.output(item, false));
  }

  /** Frozen (a cached state), with this version's apiVersion then kind as its first keys. */
  private inOutputForm(obj: KubeObject): boolean {
    if (!Object.isFrozen(obj) || obj.apiVersion !== this.apiVersion || obj.kind !== this.info.kind)
      return false;
    let i = 0;
    for (const key in obj) {
      if (key !== (i === 0 ? 'apiVersion' : 'kind')) return false;
      if (++i === 2) return true;
    }
    return false;
  }

  async watch(ctx: RequestContext, options: ListOptions): Promise<Watcher> {
    validateListOptions(options, true);
    const predicate = selectionPredicate(options);
    const target = this.listTarget(ctx.namespace, predicate, undefined);
    const watcher = await this.storageCall(
      () =>
        this.storage.watch(target.key, {
          resourceVersion: options.resourceVersion ?? '',
          resourceVersionMatch: resourceVersionMatchOf(options),
          predicate,
          recursive: target.recursive,
          sendInitialEvents: options.sendInitialEvents,
          allowWatchBookmarks: options.allowWatchBookmarks ?? false,
        }),
      '',
      'watch',
    );
    return decorateWatcher(watcher, this.decorateWatchEvent);
  }

  /**
   * What storage must read for a selection: a single key when the field
   * selector pins the name (and the namespace is known), else the collection,
   * narrowed to one namespace when the selector pins that (store.go ListPredicate).
   */
  private listTarget(
    requestNamespace: string,
    predicate: SelectionPredicate,
    continueToken: string | undefined,
  ): { key: string; recursive: boolean } {
    let namespace = requestNamespace;
    if (this.info.namespaced && !namespace)
      namespace = predicate.fields.requiresExactMatch('metadata.namespace') ?? '';
    const name = predicate.fields.requiresExactMatch('metadata.name');
    const single =
      !!name &&
      !continueToken &&
      (!this.info.namespaced || !!namespace) &&
      isValidPathSegmentName(name).length === 0;
    if (single) return { key: this.keys.objectKey(namespace, name), recursive: false };
    return { key: this.keys.collectionPrefix(namespace), recursive: true };
  }

  /** A watch event as this Store hands objects out: one function for all its watches. */
  private readonly decorateWatchEvent = (e: StorageWatchEvent): StorageWatchEvent =>
    // A shared event (one for all watchers) gets one shared decorated copy, with its own
    // memo for the layers above: decorating it depends on nothing but the event.
    e.shared
      ? e.shared.memo(this.decoratedEvent, () => ({
          ...this.decoratedWatchEvent(e),
          shared: new EventMemo(),
        }))
      : this.decoratedWatchEvent(e);

  private decoratedWatchEvent(e: StorageWatchEvent): StorageWatchEvent {
    switch (e.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
        return { type: e.type, object: this.output(e.object, false) };
      case 'BOOKMARK':
        return { type: e.type, object: { ...e.object, apiVersion: this.apiVersion, kind: this.info.kind } };
      case 'ERROR':
        return e;
    }
  }

  // ---- update / patch -------------------------------------------------------

  update(
    ctx: RequestContext,
    name: string,
    body: unknown,
    options: UpdateOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    return this.updateTarget(ctx, name, body, options, '');
  }

  patch(
    ctx: RequestContext,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }> {
    return this.patchTarget(ctx, name, patchType, patch, options, '');
  }

  private async updateTarget(
    ctx: RequestContext,
    name: string,
    body: unknown,
    options: UpdateOptions,
    target: WriteTarget,
  ): Promise<{ object: KubeObject; created: boolean }> {
    validateFieldManager(options.fieldManager, 'UpdateOptions');
    const decoded = this.decode(ctx, body, options.fieldValidation);
    this.checkName(ctx, decoded, name);
    this.dedupOwnerReferences(decoded, ctx.warnings);
    const key = this.keys.objectKey(ctx.namespace, name);
    const manager = managerName(options.fieldManager, ctx.userAgent);
    // A uid in the body is a precondition on the stored object (rest/update.go).
    const preconditions: Preconditions | undefined = decoded.metadata.uid
      ? { uid: decoded.metadata.uid }
      : undefined;
    const object = await this.updateObject(
      ctx.deadline,
      key,
      name,
      preconditions,
      options.dryRun,
      (current) => this.prepareUpdate(ctx, clone(decoded), current, manager, target, 'update'),
    );
    return { object: this.output(object, false, ctx), created: false };
  }

  private async patchTarget(
    ctx: RequestContext,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
    target: WriteTarget,
  ): Promise<{ object: KubeObject; created: boolean }> {
    if (patchType === 'apply') return this.apply(ctx, name, patch, options, target);
    const prepared = preparePatch(patchType, patch);
    if (options.force !== undefined) {
      throw newInvalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
        {
          type: 'FieldValueForbidden',
          field: 'force',
          detail: 'may not be specified for non-apply patch',
          omitValue: true,
        },
      ]);
    }
    validateFieldManager(options.fieldManager, 'PatchOptions');
    const key = this.keys.objectKey(ctx.namespace, name);
    const manager = managerName(options.fieldManager, ctx.userAgent);
    // Every attempt's warnings go to the request, as upstream's recorder keeps them
    // (deduplicated by text when sent): a retried patch keeps what a failed attempt said.
    const object = await this.updateObject(ctx.deadline, key, name, undefined, options.dryRun, (current) => {
      const patched = applyPatch(clone(current) as Record<string, unknown>, prepared, this.schema);
      const obj = decodeObject(patched, {
        info: this.info,
        schema: this.compiled,
        fieldValidation: options.fieldValidation,
        warnings: ctx.warnings,
        mode: 'patch',
      });
      this.checkName(ctx, obj, name);
      // Owner references are deduped once the write is recorded (patch.go: UpdateNoErrors,
      // then dedupOwnerReferencesTransformer): a patch that duplicates a reference is
      // recorded as owning it whole, as smd 4.4 records a duplicated key.
      return this.prepareUpdate(ctx, obj, current, manager, target, 'update', true, (recorded) =>
        this.dedupOwnerReferences(recorded, ctx.warnings, true),
      );
    });
    return { object: this.output(object, false, ctx), created: false };
  }

  /**
   * The update rules (store.go Update, rest/update.go BeforeUpdate) applied to
   * `obj` against the stored `old`. Returns `old` itself when nothing would
   * change, so that storage writes nothing: same resourceVersion, no event,
   * and managedFields keep their time.
   */
  private async prepareUpdate(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject,
    manager: string,
    target: WriteTarget,
    managedFields: ManagedFieldsMode,
    admit = true,
    afterRecording?: (recorded: KubeObject) => void,
  ): Promise<KubeObject> {
    const name = old.metadata.name ?? '';
    const meta = obj.metadata;
    if (!meta.resourceVersion) {
      // Upstream names the resource here, not the kind.
      throw newInvalid({ group: this.info.group, kind: this.info.resource }, name, [
        invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
    }
    if (meta.resourceVersion !== old.metadata.resourceVersion)
      throw newConflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
    this.ensureNamespace(ctx, meta);
    // As upstream's update and patch handlers record the write (UpdateNoErrors) in the
    // object the request made, before the strategy (BeforeUpdate) and admission: what
    // the server keeps or sets is owned by no manager of this request.
    const recorded =
      managedFields === 'update' ? this.managerOf(target).updateNoErrors(old, obj, manager) : obj;
    afterRecording?.(recorded);
    return this.prepareRecordedUpdate(ctx, recorded, old, target, admit);
  }

  /** prepareUpdate once the write is recorded in `obj`'s managedFields. */
  private async prepareRecordedUpdate(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject,
    target: WriteTarget,
    admit: boolean,
  ): Promise<KubeObject> {
    const name = old.metadata.name ?? '';
    const meta = obj.metadata;
    const oldMeta = old.metadata;
    if (oldMeta.generation === undefined) delete meta.generation;
    else meta.generation = oldMeta.generation;
    if (target === STATUS_SUBRESOURCE) {
      keepAllButStatus(obj, old);
      this.strategy.status?.prepareForUpdate?.(ctx, obj, old);
    } else {
      await this.strategy.prepareForUpdate(ctx, obj, old);
    }
    this.restoreEnvelope(obj);
    if (!meta.uid && oldMeta.uid) meta.uid = oldMeta.uid;
    if (oldMeta.creationTimestamp) meta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds != null && meta.deletionGracePeriodSeconds == null) {
      meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    }
    delete meta.selfLink;

    this.throwIfInvalid(name, this.validateUpdate(ctx, obj, old, target));
    if (admit) await this.admit(ctx, obj, old);

    // Status is not what a client asks for: only changes elsewhere count (the CRD strategy's rule).
    if (!sameDesiredState(obj, old)) meta.generation = (oldMeta.generation ?? 0) + 1;
    // Nothing to write: same resourceVersion, no event, managedFields keep their time.
    // Recorded before the strategy, an entry can differ in its time alone when the
    // strategy put back what the request changed: upstream's store runs
    // IgnoreManagedFieldsTimestampsTransformer after BeforeUpdate for exactly this.
    if (sameContent(obj, old) && sameManagedFieldsButTimes(meta.managedFields, oldMeta.managedFields))
      return old;
    return obj;
  }

  /**
   * Admission, which cannot leave managedFields broken: entries it turned into ones
   * that do not decode are put back as they were, with upstream's warning
   * (fieldmanager.NewManagedFieldsValidatingAdmissionController).
   */
  private async admit(ctx: RequestContext, obj: KubeObject, old: KubeObject | undefined): Promise<void> {
    if (!this.admission) return;
    const before = obj.metadata.managedFields;
    await this.admission.admit(ctx, obj, old, this.info);
    const warning = restoreManagedFieldsIfInvalid(obj, before);
    if (warning) ctx.warnings.push(warning);
  }

  private managerOf(target: WriteTarget): FieldManager {
    const fm = this.fieldManagers.get(target);
    if (!fm) throw new Error(`no field manager for subresource ${JSON.stringify(target)}`);
    return fm;
  }

  /** What an object that does not exist yet is to the engine: the kind, empty metadata. */
  private emptyObject(): KubeObject {
    return { apiVersion: this.apiVersion, kind: this.info.kind, metadata: {} };
  }

  /**
   * The server's own status write (a controller's UpdateStatus): `next` makes the
   * new status from the stored object, or returns undefined to leave it. It takes
   * the status subresource's path (rules, validation, managedFields under
   * `manager` with subresource status) and is retried on conflicts; admission,
   * which judges callers, is not asked. An unchanged status writes nothing.
   */
  async writeStatus(
    name: string,
    next: (current: KubeObject) => unknown,
    manager: string,
    namespace = '',
  ): Promise<KubeObject> {
    if (!this.strategy.status) throw new Error(`${this.info.resource} has no status subresource`);
    const ctx: RequestContext = { user: SERVER_USER, namespace, warnings: [] };
    const key = this.keys.objectKey(namespace, name);
    return this.updateObject(undefined, key, name, undefined, false, async (current) => {
      const status = next(current);
      if (status === undefined) return current;
      const obj = clone(current);
      obj['status'] = status;
      return this.prepareUpdate(ctx, obj, current, manager, STATUS_SUBRESOURCE, 'update', false);
    });
  }

  // ---- server-side apply -------------------------------------------------------

  /**
   * A server-side apply (handlers/patch.go applyPatcher): the applied configuration
   * is merged into the live object by the engine, which records the applier's fields
   * and refuses (409) to change fields others own unless forced. The merged object
   * then takes the update path (strategy, validation, admission). An apply to an
   * object that does not exist creates it, named by the URL (never generated).
   */
  private async apply(
    ctx: RequestContext,
    name: string,
    body: unknown,
    options: PatchOptions,
    target: WriteTarget,
  ): Promise<{ object: KubeObject; created: boolean }> {
    requireApplyFieldManager(options.fieldManager);
    validateFieldManager(options.fieldManager, 'PatchOptions');
    const applied = this.decodeApplied(body, options, ctx.warnings);
    const manager = options.fieldManager;
    const force = options.force ?? false;
    const fm = this.managerOf(target);
    const key = this.keys.objectKey(ctx.namespace, name);
    // Warnings of every attempt, as for a patch (upstream retries both alike).
    const merge = (live: KubeObject, mode: DecodeMode): KubeObject => {
      const merged = fm.apply(live, applied, manager, force);
      const obj = decodeObject(merged, {
        info: this.info,
        schema: this.compiled,
        fieldValidation: options.fieldValidation,
        warnings: ctx.warnings,
        mode,
      });
      this.checkName(ctx, obj, name);
      // After the apply is recorded in `merged`, as a patch does (patch.go).
      this.dedupOwnerReferences(obj, ctx.warnings, true);
      return obj;
    };
    try {
      const object = await this.updateObject(ctx.deadline, key, name, undefined, options.dryRun, (current) =>
        this.prepareUpdate(ctx, merge(current, 'patch'), current, manager, target, 'applied'),
      );
      return { object: this.output(object, false, ctx), created: false };
    } catch (err) {
      if (!isApiError(err) || err.reason !== 'NotFound' || err instanceof ApplyConflictError) throw err;
      if (target !== '') throw err;
    }
    // Nothing to apply to: the apply creates the object (patch.go createNewObject).
    const obj = merge(this.emptyObject(), 'body');
    this.ensureNamespace(ctx, obj.metadata);
    const created = await this.createOnce(ctx, obj, options, manager, 'applied');
    return { object: created, created: true };
  }

  /**
   * The applied configuration as the engine takes it: an object, unknown fields
   * handled per fieldValidation (reported, warned about or dropped), and its own
   * apiVersion and kind (the engine refuses another kind, or none).
   */
  private decodeApplied(body: unknown, options: PatchOptions, warnings: string[]): Record<string, unknown> {
    if (!isObject(body))
      throw newBadRequest('error decoding patch: the applied configuration must be an object');
    const decoded: Record<string, unknown> = decodeObject(clone(body), {
      info: this.info,
      schema: this.compiled,
      fieldValidation: options.fieldValidation,
      warnings,
      mode: 'patch',
      unknownFieldsTyped: true,
    });
    decoded['apiVersion'] = body['apiVersion'];
    decoded['kind'] = body['kind'];
    return decoded;
  }

  private validateUpdate(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject,
    target: WriteTarget,
  ): FieldError[] {
    const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
    const schemaErrs = this.compiled.validate(obj);
    if (schemaErrs.length > 0) return [...errs, ...schemaErrs];
    const kindErrs =
      target === STATUS_SUBRESOURCE
        ? (this.strategy.status?.validateUpdate?.(ctx, obj, old) ?? [])
        : this.strategy.validateUpdate(ctx, obj, old);
    return [...errs, ...kindErrs];
  }

  /**
   * Runs `build` against the current object inside storage's guaranteedUpdate
   * (retried on conflict), or against a plain read for a dry run. An update
   * that leaves a terminating object without finalizers deletes it instead.
   * `deadline` is the request's (none for the server's own writes).
   */
  private async updateObject(
    deadline: StorageDeadline | undefined,
    key: string,
    name: string,
    preconditions: Preconditions | undefined,
    dryRun: boolean,
    build: (current: KubeObject) => Promise<KubeObject>,
  ): Promise<KubeObject> {
    let emptied: KubeObject | undefined;
    const tryUpdate = async (current: KubeObject | null): Promise<KubeObject> => {
      if (!current) throw newNotFound(this.gr, name);
      const next = await build(current);
      if (shouldDeleteDuringUpdate(next, current)) {
        emptied = next;
        throw EMPTIED_FINALIZERS;
      }
      return next;
    };
    try {
      if (!dryRun) return await this.storage.guaranteedUpdate(key, tryUpdate, { preconditions }, deadline);
      const current = await this.storage.get(key, undefined, deadline);
      if (current) checkStoragePreconditions(key, current, preconditions);
      return await tryUpdate(current);
    } catch (err) {
      if (err === EMPTIED_FINALIZERS && emptied) {
        if (!dryRun) await this.deleteFinalized(deadline, key, name, preconditions);
        return emptied;
      }
      throw interpretStorageError(err, this.gr, name, 'update');
    }
  }

  /** Deletes an object whose last finalizer an update removed; a racing delete already did the job. */
  private async deleteFinalized(
    deadline: StorageDeadline | undefined,
    key: string,
    name: string,
    preconditions: Preconditions | undefined,
  ): Promise<void> {
    try {
      await this.storage.delete(key, { preconditions }, deadline);
    } catch (err) {
      if (isStorageError(err, 'KeyNotFound')) return;
      throw interpretStorageError(err, this.gr, name, 'delete');
    }
  }

  // ---- delete ----------------------------------------------------------------

  async delete(ctx: RequestContext, name: string, options: DeleteRequestOptions): Promise<DeleteResult> {
    validateDeleteOptions(options);
    const key = this.keys.objectKey(ctx.namespace, name);
    const dryRun = options.dryRunAll || (options.dryRun ?? []).includes('All');
    const current = await this.storageCall(
      () => this.storage.get(key, undefined, ctx.deadline),
      name,
      'delete',
    );
    if (!current) throw newNotFound(this.gr, name);
    checkDeletePreconditions(current, options.preconditions, this.gk);

    const pendingFinalizers = (current.metadata.finalizers ?? []).length > 0;
    if (pendingFinalizers || deletionFinalizers(current, options, this.garbageCollection).changed) {
      const marked = await this.markForDeletion(ctx.deadline, key, name, options, dryRun);
      if (marked) return { object: this.output(marked, false), deleted: false };
    }
    if (dryRun) return { object: this.successStatus(current), deleted: true };
    const deleted = await this.storageCall(
      () => this.storage.delete(key, { preconditions: options.preconditions }, ctx.deadline),
      name,
      'delete',
    );
    return { object: this.successStatus(deleted), deleted: true };
  }

  /**
   * Sets the garbage-collector finalizers the options ask for and marks the
   * object as being deleted; null when, after that, no finalizer keeps it.
   */
  private async markForDeletion(
    deadline: StorageDeadline | undefined,
    key: string,
    name: string,
    options: DeleteOptions,
    dryRun: boolean,
  ): Promise<KubeObject | null> {
    const mark = (current: KubeObject | null): KubeObject => {
      if (!current) throw newNotFound(this.gr, name);
      const next = clone(current);
      const { changed, finalizers } = deletionFinalizers(next, options, this.garbageCollection);
      if (changed) next.metadata.finalizers = finalizers;
      if ((next.metadata.finalizers ?? []).length === 0) throw DELETE_NOW;
      markAsDeleting(next, this.now());
      // A repeated delete that changes nothing writes nothing.
      return sameContent(next, current) ? current : next;
    };
    try {
      if (!dryRun)
        return await this.storage.guaranteedUpdate(
          key,
          mark,
          { preconditions: options.preconditions },
          deadline,
        );
      const current = await this.storage.get(key, undefined, deadline);
      if (current) checkStoragePreconditions(key, current, options.preconditions);
      return mark(current);
    } catch (err) {
      if (err === DELETE_NOW) return null;
      throw interpretStorageError(err, this.gr, name, 'update');
    }
  }

  /** The Status a completed delete answers with (store.go finalizeDelete). */
  private successStatus(obj: KubeObject): KubeObject {
    const details: Record<string, string> = { name: obj.metadata.name ?? '' };
    if (this.info.group) details.group = this.info.group;
    details.kind = this.info.resource;
    if (obj.metadata.uid) details.uid = obj.metadata.uid;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
  }

  async deleteCollection(
    ctx: RequestContext,
    options: DeleteRequestOptions,
    listOptions: ListOptions,
  ): Promise<KubeList> {
    validateDeleteOptions(options);
    const hasLimit = (listOptions.limit ?? 0) > 0;
    let page: ListOptions = hasLimit ? listOptions : { ...listOptions, limit: DELETE_COLLECTION_PAGE_SIZE };
    const items: KubeObject[] = [];
    let resourceVersion: string | undefined;
    for (;;) {
      const list = await this.list(ctx, page);
      resourceVersion ??= list.metadata.resourceVersion;
      for (const item of list.items) {
        const itemCtx: RequestContext = { ...ctx, namespace: item.metadata.namespace ?? '', signal: ctx.signal };
        try {
          const result = await this.delete(itemCtx, item.metadata.name ?? '', options);
          items.push(result.deleted ? item : (result.object as KubeObject));
        } catch (err) {
          // Someone else deleted it meanwhile: that is what was asked.
          if (isApiError(err) && err.reason === 'NotFound') continue;
          throw err;
        }
      }
      if (hasLimit || !list.metadata.continue) break;
      page = { ...page, continue: list.metadata.continue, resourceVersion: '', resourceVersionMatch: '' };
    }
    const metadata: ListMeta = {};
    if (resourceVersion) metadata.resourceVersion = resourceVersion;
    return { kind: this.info.listKind, apiVersion: this.apiVersion, metadata, items };
  }

  // ---- tables ----------------------------------------------------------------

  convertToTable(_ctx: RequestContext, object: KubeObject | KubeList, includeObject: IncludeObject): Table {
    return convertToTable(object, this.strategy.tableColumns, includeObject, this.now().getTime());
  }

  // ---- helpers ---------------------------------------------------------------

  private decode(
    ctx: RequestContext,
    body: unknown,
    fieldValidation: CreateOptions['fieldValidation'],
  ): KubeObject {
    return decodeObject(body, {
      info: this.info,
      schema: this.compiled,
      fieldValidation,
      warnings: ctx.warnings,
      mode: 'body',
    });
  }

  /** Calls storage and translates what it throws. */
  private async storageCall<T>(fn: () => Promise<T>, name: string, operation: Operation): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw interpretStorageError(err, this.gr, name, operation);
    }
  }

  /** The object as a client sees it: typed envelope, then the kind's decoration. */
  /** `ctx` is given only for the response to the write that `ctx` made. */
  private output(obj: KubeObject, created: boolean, ctx?: RequestContext): KubeObject {
    // A cached state already in output form is copied as it is (one object, the same
    // keys in the same order); any other is rebuilt with this version's apiVersion and kind first.
    const typed: KubeObject = this.inOutputForm(obj) ? { ...obj } : this.retyped(obj);
    if (this.strategy.decorate) return this.strategy.decorate(typed, created, ctx);
    // A copy of a cached (frozen) object: its JSON can be encoded once per state.
    noteOutputOf(typed, obj);
    return typed;
  }

  private retyped(obj: KubeObject): KubeObject {
    const { apiVersion: _v, kind: _k, ...rest } = obj;
    return { apiVersion: this.apiVersion, kind: this.info.kind, ...rest };
  }

  private restoreEnvelope(obj: KubeObject): void {
    obj.apiVersion = this.apiVersion;
    obj.kind = this.info.kind;
  }

  /**
   * The request's namespace wins (rest/meta.go EnsureObjectNamespaceMatchesRequestNamespace):
   * an empty one is filled, a cluster-scoped object loses it, a different one is a 400.
   */
  private ensureNamespace(ctx: RequestContext, meta: ObjectMeta): void {
    const expected = this.info.namespaced ? ctx.namespace : '';
    const actual = meta.namespace ?? '';
    if (actual === expected) return;
    if (actual === '') {
      meta.namespace = expected;
      return;
    }
    if (expected === '') {
      delete meta.namespace;
      return;
    }
    throw newBadRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }

  /** The body of a PUT or the result of a patch must name the object of the URL (handlers/rest.go checkName). */
  private checkName(ctx: RequestContext, obj: KubeObject, name: string): void {
    const objName = obj.metadata.name ?? '';
    if (objName !== name) {
      throw newBadRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
    }
    const objNamespace = obj.metadata.namespace ?? '';
    if (this.info.namespaced && ctx.namespace && objNamespace && objNamespace !== ctx.namespace) {
      throw newBadRequest(
        `the namespace of the object (${objNamespace}) does not match the namespace on the request (${ctx.namespace})`,
      );
    }
    this.ensureNamespace(ctx, obj.metadata);
  }

  /**
   * Duplicate owner references are dropped with a warning rather than refused
   * (handlers/rest.go dedupOwnerReferencesAndAddWarning); `afterRecording` for a
   * patch or an apply, which dedup only after the write is recorded and word it so.
   */
  private dedupOwnerReferences(obj: KubeObject, warnings: string[], afterRecording = false): void {
    const refs = obj.metadata.ownerReferences;
    if (!refs || refs.length < 2) return;
    const kept: typeof refs = [];
    const duplicates: string[] = [];
    // One canonical text per reference, so a body of many references costs one pass
    // (upstream looks up the uid first, then compares the kept list: quadratic in a
    // body whose references share a uid).
    const seen = new Set<string>();
    for (const ref of refs) {
      const text = canonicalReference(ref);
      if (seen.has(text)) duplicates.push(ref.uid);
      else {
        seen.add(text);
        kept.push(ref);
      }
    }
    if (duplicates.length === 0) return;
    const warning = afterRecording
      ? DUPLICATE_OWNER_REFERENCES_AFTER_MUTATING_ADMISSION_WARNING
      : DUPLICATE_OWNER_REFERENCES_WARNING;
    warnings.push(`${warning}${duplicates.join(', ')}`);
    obj.metadata.ownerReferences = kept;
  }

  private throwIfInvalid(name: string, errs: readonly FieldError[]): void {
    if (errs.length > 0) throw newInvalid(this.gk, name, errs);
  }
}

/**
 * A reference as text equal for exactly the references deepEqual finds equal: its
 * fields sorted by name, those without a value left out (a decoded body has none).
 */
function canonicalReference(ref: object): string {
  const fields = Object.entries(ref)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(fields);
}

/** store.go ShouldDeleteDuringUpdate: the last finalizer is gone from an object already being deleted. */
function shouldDeleteDuringUpdate(next: KubeObject, existing: KubeObject): boolean {
  if ((next.metadata.finalizers ?? []).length > 0) return false;
  if (!existing.metadata.deletionTimestamp) return false;
  const grace = existing.metadata.deletionGracePeriodSeconds;
  return grace == null || grace === 0;
}

/** The precondition check storage does, for dry runs that never reach storage's update. */
function checkStoragePreconditions(
  key: string,
  obj: KubeObject,
  preconditions: Preconditions | undefined,
): void {
  if (!preconditions) return;
  if (preconditions.uid !== undefined && preconditions.uid !== (obj.metadata.uid ?? '')) {
    throw invalidObj(
      key,
      0,
      `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`,
    );
  }
  if (
    preconditions.resourceVersion !== undefined &&
    preconditions.resourceVersion !== (obj.metadata.resourceVersion ?? '')
  ) {
    throw invalidObj(
      key,
      0,
      `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`,
    );
  }
}
