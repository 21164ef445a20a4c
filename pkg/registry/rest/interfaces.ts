// The seam between the HTTP layer and the registry (k8s.io/apiserver pkg/registry/rest).
// The HTTP layer decodes the request, authenticates and authorizes it, then calls one
// of these methods; everything about objects (defaulting, validation, storage) lives
// behind them. A kind supplies a Strategy to the generic Store; a resource that is not
// stored (selves, tokens) implements the verbs it has and leaves the rest undefined.

import type { FieldError } from '../../apis/meta/field-errors.js';
import type {
  DeleteOptions,
  KubeList,
  KubeObject,
  Status,
  Table,
  TableColumnDefinition,
} from '../../apis/meta/types.js';
import type { ResourceVersionMatch, Watcher } from '../../storage/interfaces.js';
import type { ResourceInfo, SubresourceInfo, Verb } from '../../apis/meta/resource-info.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import type { StorageDeadline } from '../../storage/deadline.js';

// The types layer describes resources (as upstream's metav1 does); the registry speaks of them too.
export type { ResourceInfo, SubresourceInfo, Verb };

/** What the registry knows of the request it serves. */
export interface RequestContext {
  /** The caller, as authentication found it (credential, scope and all). */
  readonly user: AuthenticatedUser;
  /** The namespace from the path ('' for cluster-scoped or all-namespaces requests). */
  readonly namespace: string;
  readonly userAgent?: string;
  /** Warnings for the client; the HTTP layer sends each as a `Warning: 299 - "..."` header. */
  readonly warnings: string[];
  /** Aborted when the client goes away or the server shuts down. */
  readonly signal?: AbortSignal;
  /**
   * The request's deadline (filters/timeout.ts): passed to every storage call made for
   * the request, as upstream passes ctx. None for a watch, or work outside a request.
   */
  readonly deadline?: StorageDeadline | undefined;
}

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  readonly dryRun: boolean;
  /** Manager recorded in managedFields ('' = derive from the User-Agent). */
  readonly fieldManager: string;
  readonly fieldValidation: FieldValidation;
}

export type CreateOptions = WriteOptions;
export type UpdateOptions = WriteOptions;

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface PatchOptions extends WriteOptions {
  readonly force?: boolean;
}

export interface GetOptions {
  readonly resourceVersion?: string;
}

/** List and watch options as parsed from the query string; the registry validates their combination. */
export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: ResourceVersionMatch | string;
  readonly limit?: number;
  readonly continue?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly sendInitialEvents?: boolean;
  readonly timeoutSeconds?: number;
}

export interface DeleteRequestOptions extends DeleteOptions {
  readonly dryRunAll: boolean;
}

export interface DeleteResult {
  /** A Success Status when the object is gone; the object itself while finalizers keep it. */
  readonly object: KubeObject | Status;
  /** True when the object was removed from storage (or would be, on dry run). */
  readonly deleted: boolean;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** What a resource offers the HTTP layer. Undefined methods are verbs the resource does not have. */
export interface RESTStorage {
  readonly info: ResourceInfo;
  /** The kind's schema as published in OpenAPI (and read by `kubectl explain`). */
  readonly schema?: Record<string, unknown>;
  create?(ctx: RequestContext, body: unknown, options: CreateOptions): Promise<KubeObject>;
  get?(ctx: RequestContext, name: string, options: GetOptions): Promise<KubeObject>;
  list?(ctx: RequestContext, options: ListOptions): Promise<KubeList>;
  update?(
    ctx: RequestContext,
    name: string,
    body: unknown,
    options: UpdateOptions,
  ): Promise<{ object: KubeObject; created: boolean }>;
  patch?(
    ctx: RequestContext,
    name: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }>;
  delete?(ctx: RequestContext, name: string, options: DeleteRequestOptions): Promise<DeleteResult>;
  deleteCollection?(ctx: RequestContext, options: DeleteRequestOptions, listOptions: ListOptions): Promise<KubeList>;
  watch?(ctx: RequestContext, options: ListOptions): Promise<Watcher>;
  /** Rows for `kubectl get`; for a list, one row per item. */
  convertToTable?(ctx: RequestContext, object: KubeObject | KubeList, includeObject: IncludeObject): Table;
  /** Subresource handlers by name (`kubeconfig`, `accesskeys`). */
  readonly subresources?: ReadonlyMap<string, SubresourceStorage>;
  /**
   * Decodes a request body sent as `application/vnd.kubernetes.protobuf` into the
   * object its JSON form would be. Only kinds clients send in protobuf alone have it
   * (the self-service reviews kubectl 1.32 posts); for the rest protobuf is a 415.
   */
  decodeProtobuf?(raw: Buffer): unknown;
}

export interface SubresourceStorage {
  readonly info: SubresourceInfo;
  /** Schema of the kind the subresource accepts and returns, for OpenAPI. */
  readonly schema?: Record<string, unknown>;
  get?(ctx: RequestContext, parentName: string, options: GetOptions): Promise<KubeObject | KubeList>;
  create?(ctx: RequestContext, parentName: string, body: unknown, options: CreateOptions): Promise<KubeObject>;
  update?(
    ctx: RequestContext,
    parentName: string,
    body: unknown,
    options: UpdateOptions,
  ): Promise<{ object: KubeObject; created: boolean }>;
  patch?(
    ctx: RequestContext,
    parentName: string,
    patchType: PatchType,
    patch: unknown,
    options: PatchOptions,
  ): Promise<{ object: KubeObject; created: boolean }>;
  /** True when the subresource's objects are the parent's kind (`status`): tables and apply work as on the parent. */
  readonly parentKind?: boolean;
}

/**
 * The rules of writes through `<resource>/status` (upstream's status strategies).
 * Before these run, the Store has already made the written object the stored one
 * with only its `status` taken from the request (the CRD status strategy's rule).
 */
export interface StatusStrategy {
  /** Fills what the server keeps in status whatever a client writes (VirtualClusterInstance's template mirror). */
  prepareForUpdate?(ctx: RequestContext, obj: KubeObject, old: KubeObject): void;
  /** Checks particular to the kind's status, beyond its schema. */
  validateUpdate?(ctx: RequestContext, obj: KubeObject, old: KubeObject): FieldError[];
}

/**
 * A last check of a write (k8s validating admission): called by the Store after
 * the object passed validation and before it is written, for creates (`old`
 * undefined) and updates, dry runs included. It refuses by throwing an ApiError
 * (403 Forbidden, 422 Invalid); it must not change the object. This is the seam
 * for rules that need the caller and the object together (who may own a key,
 * blockOwnerDeletion), which authorization, seeing only the request, cannot judge.
 * It runs after the write was recorded in managedFields: fields it set would be
 * owned by no manager, and managedFields it left undecodable are put back with a
 * warning (as upstream guards its admission chain).
 */
export interface Admission {
  admit(
    ctx: RequestContext,
    obj: KubeObject,
    old: KubeObject | undefined,
    resource: ResourceInfo,
  ): void | Promise<void>;
}

/** A column of `kubectl get` output and how to compute its cell. */
export interface TableColumn {
  readonly definition: TableColumnDefinition;
  cell(obj: KubeObject): unknown;
}

/**
 * What a kind tells the generic Store (k8s.io/apiserver pkg/registry/rest
 * RESTCreateStrategy/RESTUpdateStrategy). Validation returns field errors, never throws.
 * Metadata rules common to every kind (names, labels, ownerReferences, immutable
 * fields) are the Store's; a strategy checks only what is particular to its kind.
 */
export interface Strategy {
  readonly info: ResourceInfo;
  /** The kind's JSON schema (apiVersion, kind, metadata, spec, status): validation, pruning, OpenAPI. */
  readonly schema: Record<string, unknown>;
  /** Clears what clients may not set (status) and fills server-side fields before validation. */
  prepareForCreate(ctx: RequestContext, obj: KubeObject): void | Promise<void>;
  prepareForUpdate(ctx: RequestContext, obj: KubeObject, old: KubeObject): void | Promise<void>;
  validate(ctx: RequestContext, obj: KubeObject): FieldError[];
  validateUpdate(ctx: RequestContext, obj: KubeObject, old: KubeObject): FieldError[];
  /** Columns after Name for `kubectl get` (Age is added by the Store). */
  readonly tableColumns: readonly TableColumn[];
  /**
   * Shapes an object on its way out to a client (hides what must never be returned).
   * `created` is true only for the response to the create that made it.
   * `ctx` is the request's context when the object is the response to a write (create,
   * update, patch) made by that request; a strategy may use it to show that request,
   * and only it, what its own prepareForCreate/prepareForUpdate set aside (a new
   * access key). Leave it undefined for reads, lists and watch events.
   */
  decorate?(obj: KubeObject, created: boolean, ctx?: RequestContext): KubeObject;
  /**
   * Present when the kind has a `status` subresource: writes to the main resource
   * then keep the stored status (prepareForUpdate's job) and `<resource>/status`
   * writes change nothing but status.
   */
  readonly status?: StatusStrategy;
}
