// How a served resource is named and what it supports: discovery, OpenAPI, request
// routing, error messages and the kinds' own definitions all need it. It lives with
// the API types (upstream keeps APIResource in metav1), so the types layer never
// imports the registry above it.

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export interface SubresourceInfo {
  readonly name: string;
  /** Kind of the object the subresource accepts and returns. */
  readonly kind: string;
  /** Group of that kind when it differs from the parent's ('' = parent's group). */
  readonly group?: string;
  readonly verbs: readonly Verb[];
}

/** Everything discovery, OpenAPI, request routing and error messages need to name a resource. */
export interface ResourceInfo {
  readonly group: string;
  readonly version: string;
  /** Plural, lower case: `sharedsecrets`. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly Verb[];
  readonly subresources: readonly SubresourceInfo[];
}
