// Discovery documents, built from the resources a server serves (pure functions;
// the HTTP side caches and serves them). Shapes are apimachinery's APIResourceList,
// APIGroup(List), APIVersions and apidiscovery.k8s.io/v2 APIGroupDiscoveryList,
// because kubectl, client-go and the aggregator parse exactly those.

import { createHash } from 'node:crypto';

import type { RESTStorage, SubresourceInfo, Verb } from '../../registry/rest/interfaces.js';

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: { clientCIDR: string; serverAddress: string }[];
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: string[];
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Cluster' | 'Namespaced';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.k8s.io/v2';
  metadata: Record<string, never>;
  items: {
    metadata: { name: string };
    versions: { version: string; resources: APIResourceDiscovery[]; freshness: 'Current' | 'Stale' }[];
  }[];
}

/**
 * base64(sha256("group/version/Kind")[:8]), as apiserver's discovery computes it.
 * Only equality matters to clients (the storage migrator compares it).
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256')
    .update(`${group}/${version}/${kind}`)
    .digest()
    .subarray(0, 8)
    .toString('base64');
}

/** A strong ETag for a serialized document: the quoted upper-case hex SHA-512, as upstream. */
export function etagOf(json: string): string {
  return `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`;
}

function sortedVerbs(verbs: readonly Verb[]): string[] {
  return [...new Set(verbs)].sort();
}

/** A resource's subresources: the handlers it has, plus any its info declares, by name. */
export function subresourcesOf(storage: RESTStorage): SubresourceInfo[] {
  const byName = new Map<string, SubresourceInfo>();
  for (const sub of storage.info.subresources) byName.set(sub.name, sub);
  for (const sub of storage.subresources?.values() ?? []) byName.set(sub.info.name, sub.info);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function sortedByResource(resources: readonly RESTStorage[]): RESTStorage[] {
  return [...resources].sort((a, b) => a.info.resource.localeCompare(b.info.resource));
}

function groupVersionOf(group: string, version: string): GroupVersionForDiscovery {
  return { groupVersion: `${group}/${version}`, version };
}

/** `/apis/<group>/<version>`: the resources of the group version, subresources as `name/sub`. */
export function apiResourceList(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): APIResourceList {
  const out: APIResource[] = [];
  for (const storage of sortedByResource(resources)) {
    const info = storage.info;
    const resource: APIResource = {
      name: info.resource,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: sortedVerbs(info.verbs),
    };
    if (info.shortNames.length > 0) resource.shortNames = [...info.shortNames];
    if (info.categories.length > 0) resource.categories = [...info.categories];
    resource.storageVersionHash = storageVersionHash(group, version, info.kind);
    out.push(resource);
    for (const sub of subresourcesOf(storage)) {
      const entry: APIResource = {
        name: `${info.resource}/${sub.name}`,
        singularName: '',
        namespaced: info.namespaced,
        kind: sub.kind,
        verbs: sortedVerbs(sub.verbs),
      };
      if (sub.group && sub.group !== group) {
        entry.group = sub.group;
        entry.version = version;
      }
      out.push(entry);
    }
  }
  // The core group ('') is named by its version alone: `/api/v1` says groupVersion "v1".
  const groupVersion = group === '' ? version : `${group}/${version}`;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: out };
}

/** `/apis/<group>`: the group with its one (preferred) version. */
export function apiGroup(group: string, version: string): APIGroup {
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions: [groupVersionOf(group, version)],
    preferredVersion: groupVersionOf(group, version),
  };
}

/** `/apis` as plain JSON: the one group this server serves. */
export function apiGroupList(group: string, version: string): APIGroupList {
  const { kind: _kind, apiVersion: _apiVersion, ...entry } = apiGroup(group, version);
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [entry] };
}

/**
 * `/api`: this server has no core resources, but advertises the core `v1` (with an
 * empty `/api/v1`), as an aggregated server's host does. kubectl needs it to decode
 * what it prints itself: `kubectl get -o json` writes a `v1` `List`, and without a
 * `v1` in discovery `kubectl replace -f -` and `apply -f -` refuse that List.
 */
export function apiVersions(): APIVersions {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }],
  };
}

/**
 * `/api` as aggregated discovery: the core v1 with no resources. Clients that read it
 * (kubectl 1.26+) never fetch `/api/v1`, whose empty list client-go's discovery cache
 * reports as "received empty response for: v1" (making `kubectl api-resources` fail).
 */
export function coreAggregatedDiscovery(): unknown {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [{ metadata: { creationTimestamp: null }, versions: [{ version: 'v1', resources: [], freshness: 'Current' }] }],
  };
}

/**
 * `/apis` with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`.
 * Every resource and subresource carries a responseKind: client-go drops entries without one.
 */
export function aggregatedDiscovery(
  group: string,
  version: string,
  resources: readonly RESTStorage[],
): APIGroupDiscoveryList {
  const discovered: APIResourceDiscovery[] = sortedByResource(resources).map((storage) => {
    const info = storage.info;
    const entry: APIResourceDiscovery = {
      resource: info.resource,
      responseKind: { group, version, kind: info.kind },
      scope: info.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: info.singular,
      verbs: sortedVerbs(info.verbs),
    };
    if (info.shortNames.length > 0) entry.shortNames = [...info.shortNames];
    if (info.categories.length > 0) entry.categories = [...info.categories];
    const subs = subresourcesOf(storage);
    if (subs.length > 0) {
      entry.subresources = subs.map((sub) => ({
        subresource: sub.name,
        responseKind: { group: sub.group || group, version, kind: sub.kind },
        verbs: sortedVerbs(sub.verbs),
      }));
    }
    return entry;
  });
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [
      { metadata: { name: group }, versions: [{ version, resources: discovered, freshness: 'Current' }] },
    ],
  };
}
