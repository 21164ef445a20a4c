// The aggregator double's discovery manager (kube-aggregator's
// pkg/apiserver/handler_discovery.go): it fetches /apis through the proxy as
// system:kube-aggregator in system:masters with the aggregated (v2) Accept header
// and the cached ETag, falls back to the legacy /apis/<group>/<version> document,
// and publishes this APIService's group version as Current, or as an empty Stale
// version after an error; and the discovery documents the double serves from it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { APIREGISTRATION, type APIServiceSpec } from './aggregator-apiservice.js';
import { headerValue, writeBody } from './aggregator-http.js';
import { DISCOVERY_TIMEOUT_MS, type AggregatedServerConnection } from './aggregator-proxy.js';
import {
  ACCEPT_DISCOVERY_V2,
  convertLegacyResources,
  ifNoneMatchHits,
  isDiscoveryV2ContentType,
  quotedEtag,
  type GroupDiscoveryList,
  type LegacyAPIResource,
  type ProxiedUser,
  type VersionDiscovery,
} from './aggregator-wire.js';

export const KUBE_AGGREGATOR: ProxiedUser = { name: 'system:kube-aggregator', groups: ['system:masters'] };
const KUBE_AGGREGATOR_NO_GROUPS: ProxiedUser = { name: 'system:kube-aggregator', groups: [] };

export interface DiscoverySyncResult {
  /** The entry now published under /apis for this APIService's group/version. */
  readonly entry: VersionDiscovery;
  /** Why the entry is Stale; undefined when Current. */
  readonly error?: string;
}

/** `<namespace>/<name>` of the APIService's Service, as kube-aggregator names it in errors. */
export function serviceKey(apiService: APIServiceSpec): string {
  return `${apiService.service.namespace}/${apiService.service.name}`;
}

export class DiscoveryManager {
  private cache: { byGroupVersion: Map<string, VersionDiscovery>; etag: string } | undefined;
  /** The version entry published under /apis, once sync() has run. */
  published: VersionDiscovery | undefined;

  constructor(
    private readonly apiService: APIServiceSpec,
    private readonly connection: AggregatedServerConnection,
  ) {}

  async sync(): Promise<DiscoverySyncResult> {
    const { group, version } = this.apiService;
    const key = `${group}/${version}`;
    let found: Map<string, VersionDiscovery> | undefined;
    let error: string | undefined;
    const cached = this.cache;
    const headers: Record<string, string> = { Accept: ACCEPT_DISCOVERY_V2 };
    if (cached && cached.etag) headers['If-None-Match'] = cached.etag;
    const r = await this.connection.throughProxy(
      'discovery',
      KUBE_AGGREGATOR,
      '/apis',
      headers,
      DISCOVERY_TIMEOUT_MS,
    );
    const contentType = headerValue(r.headers, 'content-type');
    if (r.status === 304) {
      found = cached?.byGroupVersion;
    } else if (r.status === 503) {
      error = `service ${serviceKey(this.apiService)} returned non-success response code: 503`;
    } else if (r.status === 200 && isDiscoveryV2ContentType(contentType)) {
      try {
        found = discoveryMap(JSON.parse(r.body) as GroupDiscoveryList);
        this.cache = { byGroupVersion: found, etag: headerValue(r.headers, 'etag') ?? '' };
      } catch (err) {
        error = (err as Error).message;
      }
    } else {
      // Not aggregated discovery: the legacy document of exactly this group version.
      const legacy = await this.fetchLegacy(cached?.etag);
      if (legacy.error !== undefined) error = legacy.error;
      else if (legacy.entry) found = new Map([[key, legacy.entry]]);
    }
    const entry: VersionDiscovery = { ...(found?.get(key) ?? { version }) };
    entry.freshness = error === undefined ? 'Current' : 'Stale';
    this.published = entry;
    return error === undefined ? { entry } : { entry, error };
  }

  /**
   * The discovery manager's fallback request on its own: `/apis/<group>/<version>`
   * through the proxy as system:kube-aggregator without groups, Accept
   * application/json, converted to a v2 version entry as kube-aggregator converts it.
   */
  async fetchLegacy(etag?: string): Promise<{ entry?: VersionDiscovery; error?: string }> {
    const { group, version } = this.apiService;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (etag) headers['If-None-Match'] = etag;
    const path = `/apis/${group}/${version}`;
    const r = await this.connection.throughProxy(
      'discovery',
      KUBE_AGGREGATOR_NO_GROUPS,
      path,
      headers,
      DISCOVERY_TIMEOUT_MS,
    );
    if (r.status !== 200) return { error: `failed to download legacy discovery for ${path}: ${r.body}` };
    try {
      const list = JSON.parse(r.body) as { resources?: LegacyAPIResource[] };
      return { entry: convertLegacyResources(version, list.resources ?? []) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  /** The APIGroupList's groups: apiregistration, then the APIService's. */
  apiGroups(): { name: string; versions: unknown[]; preferredVersion: unknown }[] {
    const { group, version } = this.apiService;
    const gv = (g: string, v: string): { groupVersion: string; version: string } => ({
      groupVersion: `${g}/${v}`,
      version: v,
    });
    return [
      {
        name: APIREGISTRATION,
        versions: [gv(APIREGISTRATION, 'v1')],
        preferredVersion: gv(APIREGISTRATION, 'v1'),
      },
      { name: group, versions: [gv(group, version)], preferredVersion: gv(group, version) },
    ];
  }

  /** The merged v2 document: apiregistration first, then the APIService's group once discovery synced. */
  items(): GroupDiscoveryList['items'] {
    const items: GroupDiscoveryList['items'] = [
      {
        metadata: { name: APIREGISTRATION },
        versions: [
          {
            version: 'v1',
            freshness: 'Current',
            resources: [
              {
                resource: 'apiservices',
                responseKind: { group: APIREGISTRATION, version: 'v1', kind: 'APIService' },
                scope: 'Cluster',
                singularResource: 'apiservice',
                verbs: ['get', 'list'],
                categories: ['api-extensions'],
              },
            ],
          },
        ],
      },
    ];
    if (this.published) items.push({ metadata: { name: this.apiService.group }, versions: [this.published] });
    return items;
  }

  static write(req: IncomingMessage, res: ServerResponse, doc: Pick<GroupDiscoveryList, 'items'>): void {
    const body = JSON.stringify({
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      metadata: {},
      ...doc,
    });
    const etag = quotedEtag(body);
    res.setHeader('Vary', 'Accept');
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'public');
    if (ifNoneMatchHits(req.headers['if-none-match'], etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    writeBody(res, 200, ACCEPT_DISCOVERY_V2, body);
  }
}

function discoveryMap(doc: GroupDiscoveryList): Map<string, VersionDiscovery> {
  const out = new Map<string, VersionDiscovery>();
  for (const g of doc.items ?? []) {
    for (const v of g.versions ?? []) {
      // An absent responseKind becomes an empty one (kube-aggregator guards old clients from nil).
      for (const r of v.resources ?? []) {
        r.responseKind ??= { group: '', version: '', kind: '' };
        for (const s of r.subresources ?? []) s.responseKind ??= { group: '', version: '', kind: '' };
      }
      out.set(`${g.metadata.name}/${v.version}`, v);
    }
  }
  return out;
}

export function wantsDiscoveryV2(accept: string): boolean {
  return accept.split(',').some((part) => isDiscoveryV2ContentType(part));
}
