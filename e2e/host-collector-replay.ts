// The requests the host cluster's garbage collector (kube-controller-manager)
// sends to an aggregated API, replayed with its exact headers and bodies, as the
// aggregator proxies them to the server. Sources: client-go metadata/metadata.go
// (Accept of Get/List/Watch/Patch, the DeleteOptions body in legacy "v1" with a
// JSON Content-Type, the default Accept), client-go tools/cache/reflector.go (the
// list with resourceVersion=0 and limit=500, the watch from the list's revision,
// and the watch-list stream with its initial-events-end bookmark), and
// kube-controller-manager garbagecollector/patch.go and operations.go (strategic
// merge patches of ownerReferences with the dependent's uid, the JSON merge patch
// fallback carrying resourceVersion, the finalizer removal, the delete with uid and
// resourceVersion preconditions and a propagationPolicy). A broken request here
// would stall garbage collection for the whole host cluster.

import assert from 'node:assert/strict';
import { GROUP, GROUP_VERSION } from './harness.js';
import { apiRequest, openWatch } from './https-client.js';
import type { ApiResponse, HttpsTarget, RawWatch, WatchEvent } from './https-client.js';

const V1 = `/apis/${GROUP}/v1`;
const NS = 'gc-host';

/** metadata.go Get, Watch and Patch. */
export const ACCEPT_PARTIAL_OBJECT_METADATA =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
/** metadata.go List. */
export const ACCEPT_PARTIAL_OBJECT_METADATA_LIST =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** metadata.go ConfigFor: what Delete (which sets no Accept of its own) asks for. */
const ACCEPT_DEFAULT = 'application/vnd.kubernetes.protobuf,application/json';
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    blockOwnerDeletion?: boolean;
  }[];
  finalizers?: string[];
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
}

interface MetadataObject {
  kind?: string;
  apiVersion?: string;
  metadata: Meta;
  spec?: unknown;
}

function json<T>(r: ApiResponse, status: number, what: string): T {
  assert.equal(r.status, status, `${what}: ${r.status} ${r.text}`);
  assert.match(String(r.headers['content-type']), /^application\/json/, `${what}: Content-Type`);
  return r.json<T>();
}

function assertPartial(obj: MetadataObject, what: string): void {
  assert.equal(obj.kind, 'PartialObjectMetadata', `${what}: kind`);
  assert.equal(obj.apiVersion, 'meta.k8s.io/v1', `${what}: apiVersion`);
  assert.equal(obj.spec, undefined, `${what}: metadata only`);
  assert.ok(obj.metadata.uid, `${what}: uid`);
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function watchPartials(w: RawWatch, type: string): WatchEvent[] {
  return w.events.filter((e) => e.type === type);
}

/**
 * Runs the collector's sequence against `gc` (the collector's identity, through
 * the aggregator); `admin` makes the objects as a user would. The server must be
 * one with a host cluster: its own collector off, the deletion finalizers honoured.
 */
export async function replayHostGarbageCollector(admin: HttpsTarget, gc: HttpsTarget): Promise<void> {
  const call = (
    target: HttpsTarget,
    method: string,
    path: string,
    body?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> => apiRequest(target, method, path, body, headers);

  // The objects: a dependent with two owners, one of them blocking.
  const team = async (name: string): Promise<MetadataObject> =>
    json<MetadataObject>(
      await call(admin, 'POST', `${V1}/teams`, {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { name },
        spec: {},
      }),
      201,
      `create team ${name}`,
    );
  const owner = await team('gc-host-owner');
  const other = await team('gc-host-other');
  const ownerRef = (t: MetadataObject, block?: boolean): Record<string, unknown> => ({
    apiVersion: GROUP_VERSION,
    kind: 'Team',
    name: t.metadata.name,
    uid: t.metadata.uid,
    ...(block !== undefined ? { blockOwnerDeletion: block } : {}),
  });
  const dependent = json<MetadataObject>(
    await call(admin, 'POST', `${V1}/namespaces/${NS}/sharedsecrets`, {
      apiVersion: GROUP_VERSION,
      kind: 'SharedSecret',
      metadata: { name: 'gc-host-dep', ownerReferences: [ownerRef(owner, true), ownerRef(other)] },
      spec: { displayName: 'dep', data: {} },
    }),
    201,
    'create the dependent',
  );
  const depPath = `${V1}/namespaces/${NS}/sharedsecrets/gc-host-dep`;

  // GetDeletableResources: every kind must offer delete, list and watch.
  const discovery = json<{ resources: { name: string; verbs: string[] }[] }>(
    await call(gc, 'GET', V1, undefined, { Accept: 'application/json, */*' }),
    200,
    'discovery',
  );
  for (const r of discovery.resources.filter((x) => !x.name.includes('/') && x.name !== 'selves')) {
    if (r.name === 'directclusterendpointtokens') continue;
    for (const verb of ['delete', 'list', 'watch'])
      assert.ok(r.verbs.includes(verb), `${r.name} offers ${verb} (or the collector ignores it)`);
  }

  // The reflector's list: metadata only, from the cache (resourceVersion=0), in pages of 500.
  const list = json<{
    kind: string;
    apiVersion: string;
    metadata: { resourceVersion: string };
    items: MetadataObject[];
  }>(
    await call(gc, 'GET', `${V1}/sharedsecrets?limit=500&resourceVersion=0`, undefined, {
      Accept: ACCEPT_PARTIAL_OBJECT_METADATA_LIST,
    }),
    200,
    'metadata list',
  );
  assert.equal(list.kind, 'PartialObjectMetadataList');
  assert.equal(list.apiVersion, 'meta.k8s.io/v1');
  assert.ok(list.metadata.resourceVersion);
  const listed = list.items.find((i) => i.metadata.uid === dependent.metadata.uid);
  assert.ok(listed, 'the dependent is listed');
  assert.equal(listed.spec, undefined, 'list items carry metadata only');
  assert.deepEqual(
    listed.metadata.ownerReferences?.map((r) => r.uid),
    [owner.metadata.uid, other.metadata.uid],
  );

  // The reflector's watch-list: initial ADDED events, then the initial-events-end bookmark.
  const watchList = await openWatch(
    gc,
    `${V1}/sharedsecrets?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=true`,
    30_000,
    { Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
  );
  // And the watch that follows a list, from its revision.
  const watch = await openWatch(
    gc,
    `${V1}/teams?allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=300&watch=true`,
    30_000,
    { Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
  );
  try {
    for (const w of [watchList, watch]) {
      assert.equal(w.status, 200);
      assert.match(w.contentType, /^application\/json/);
    }
    await until('the initial-events-end bookmark', () =>
      watchPartials(watchList, 'BOOKMARK').some(
        (e) => (e.object['metadata'] as Meta | undefined)?.annotations?.[INITIAL_EVENTS_END] === 'true',
      ),
    );
    const end = watchList.events.findIndex((e) => e.type === 'BOOKMARK');
    const initial = watchList.events.slice(0, end);
    assert.ok(
      initial.every((e) => e.type === 'ADDED'),
      'only ADDED events before the bookmark',
    );
    const added = initial.map((e) => e.object as unknown as MetadataObject);
    const seen = added.find((o) => o.metadata.uid === dependent.metadata.uid);
    assert.ok(seen, 'the dependent is among the initial events');
    assertPartial(seen, 'watch-list event');
    assert.deepEqual(watchList.badLines, []);

    // getObject: the metadata of one object.
    assertPartial(
      json<MetadataObject>(
        await call(gc, 'GET', `${V1}/teams/gc-host-other`, undefined, {
          Accept: ACCEPT_PARTIAL_OBJECT_METADATA,
        }),
        200,
        'get',
      ),
      'get',
    );

    // A dangling owner: its reference goes with the strategic merge patch (patch.go).
    const smp = json<MetadataObject>(
      await call(
        gc,
        'PATCH',
        depPath,
        {
          metadata: {
            ownerReferences: [{ $patch: 'delete', uid: other.metadata.uid }],
            uid: dependent.metadata.uid,
          },
        },
        { 'Content-Type': 'application/strategic-merge-patch+json', Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
      ),
      200,
      'strategic merge patch deleting an owner reference',
    );
    assertPartial(smp, 'patch response');
    assert.deepEqual(
      smp.metadata.ownerReferences?.map((r) => r.uid),
      [owner.metadata.uid],
    );

    // unblockOwnerReferences: metaonly's JSON, creationTimestamp null included.
    const unblocked = json<MetadataObject>(
      await call(
        gc,
        'PATCH',
        depPath,
        {
          metadata: {
            uid: dependent.metadata.uid,
            creationTimestamp: null,
            ownerReferences: [{ ...ownerRef(owner), blockOwnerDeletion: false }],
          },
        },
        { 'Content-Type': 'application/strategic-merge-patch+json', Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
      ),
      200,
      'strategic merge patch unblocking owner references',
    );
    assert.deepEqual(unblocked.metadata.ownerReferences, [{ ...ownerRef(owner), blockOwnerDeletion: false }]);

    // The JSON merge patch fallback carries the resourceVersion it was computed on.
    const mergePatchOwners = (resourceVersion: string | undefined): Promise<ApiResponse> =>
      call(
        gc,
        'PATCH',
        depPath,
        { metadata: { resourceVersion, ownerReferences: [ownerRef(owner, true)] } },
        { 'Content-Type': 'application/merge-patch+json', Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
      );
    const stale = await mergePatchOwners(dependent.metadata.resourceVersion);
    assert.equal(stale.status, 409, `a stale resourceVersion conflicts: ${stale.text}`);
    const merged = json<MetadataObject>(
      await mergePatchOwners(unblocked.metadata.resourceVersion),
      200,
      'JSON merge patch of owner references',
    );

    // A user's foreground delete: the server adds the finalizer the host's collector honours,
    // and its own collector (off with a host cluster) leaves the dependent alone.
    const deleting = json<MetadataObject>(
      await call(admin, 'DELETE', `${V1}/teams/gc-host-owner`, { propagationPolicy: 'Foreground' }),
      200,
      'foreground delete of the owner',
    );
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    assert.ok(deleting.metadata.deletionTimestamp);
    await until('the watch shows the owner being deleted', () =>
      watchPartials(watch, 'MODIFIED').some(
        (e) =>
          (e.object['metadata'] as Meta).name === 'gc-host-owner' &&
          !!(e.object['metadata'] as Meta).deletionTimestamp,
      ),
    );
    assertPartial(
      watchPartials(watch, 'MODIFIED').at(-1)?.object as unknown as MetadataObject,
      'watch event',
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await call(admin, 'GET', depPath)).status, 200, 'no collector inside the server acted');

    // deleteObject: legacy v1 DeleteOptions, JSON Content-Type, uid and resourceVersion preconditions.
    const deleteBody = (resourceVersion: string | undefined): Record<string, unknown> => ({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: dependent.metadata.uid, resourceVersion },
      propagationPolicy: 'Background',
    });
    const headers = { 'Content-Type': 'application/json', Accept: ACCEPT_DEFAULT };
    const conflict = await call(
      gc,
      'DELETE',
      depPath,
      deleteBody(dependent.metadata.resourceVersion),
      headers,
    );
    assert.equal(conflict.status, 409, conflict.text);
    json<unknown>(
      await call(gc, 'DELETE', depPath, deleteBody(merged.metadata.resourceVersion), headers),
      200,
      'delete',
    );
    assert.equal((await call(admin, 'GET', depPath)).status, 404);

    // removeFinalizer: the owner's foregroundDeletion finalizer goes by merge patch, and so does the owner.
    const current = json<MetadataObject>(
      await call(gc, 'GET', `${V1}/teams/gc-host-owner`, undefined, {
        Accept: ACCEPT_PARTIAL_OBJECT_METADATA,
      }),
      200,
      'get the owner',
    );
    json<MetadataObject>(
      await call(
        gc,
        'PATCH',
        `${V1}/teams/gc-host-owner`,
        { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: null } },
        { 'Content-Type': 'application/merge-patch+json', Accept: ACCEPT_PARTIAL_OBJECT_METADATA },
      ),
      200,
      'finalizer removal',
    );
    assert.equal((await call(admin, 'GET', `${V1}/teams/gc-host-owner`)).status, 404, 'the owner is gone');
    await until('the watch shows the owner deleted', () =>
      watchPartials(watch, 'DELETED').some((e) => (e.object['metadata'] as Meta).name === 'gc-host-owner'),
    );
  } finally {
    watchList.close();
    watch.close();
  }
}
