// A controller's view of the server: an @kubernetes/client-node informer (list, then
// watch from the list's resourceVersion) configured from the admin kube config,
// and what happens to an open watch when the server is told to stop.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, KubeConfig, ListWatch, makeInformer } from '@kubernetes/client-node';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { backends, GROUP, GROUP_VERSION, startServer } from './harness.js';
import type { TestServer } from './harness.js';

const TEST = { timeout: 120_000 };
const V1 = `/apis/${GROUP}/v1`;

interface Recorded {
  readonly verb: 'add' | 'update' | 'delete';
  readonly name: string;
  readonly resourceVersion: string;
  readonly labels: Record<string, string> | undefined;
}

/** Resolves when `check()` holds; polls, because informer callbacks arrive on their own. */
async function eventually(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const backend of backends()) {
  describe(`@kubernetes/client-node against the server on ${backend}`, () => {
    let s: TestServer;

    before(async () => {
      s = await startServer({ backend });
    });
    after(async () => {
      await s?.stop();
    });

    function clientConfig(): KubeConfig {
      const kc = new KubeConfig();
      kc.loadFromFile(s.kubeconfigPath);
      return kc;
    }

    async function createTeam(name: string): Promise<void> {
      const r = await s.api('POST', `${V1}/teams`, {
        apiVersion: GROUP_VERSION,
        kind: 'Team',
        metadata: { name },
        spec: { displayName: name },
      });
      assert.equal(r.status, 201, `${r.text}\n--- server output (tail) ---\n${s.logTail()}`);
    }

    it(
      'an informer on teams lists, then watches, and sees add, update and delete in order',
      TEST,
      async () => {
        await createTeam('informer-before');
        const kc = clientConfig();
        const api = kc.makeApiClient(CustomObjectsApi);
        const lists: string[] = [];
        const listFn = async (): Promise<KubernetesListObject<KubernetesObject>> => {
          const list = (await api.listClusterCustomObject({
            group: GROUP,
            version: 'v1',
            plural: 'teams',
          })) as KubernetesListObject<KubernetesObject>;
          lists.push(list.metadata?.resourceVersion ?? '');
          return list;
        };
        const informer = makeInformer<KubernetesObject>(kc, `${V1}/teams`, listFn);
        const events: Recorded[] = [];
        const errors: unknown[] = [];
        let connects = 0;
        const record = (verb: Recorded['verb']) => (obj: KubernetesObject) =>
          events.push({
            verb,
            name: obj.metadata?.name ?? '',
            resourceVersion: obj.metadata?.resourceVersion ?? '',
            labels: obj.metadata?.labels,
          });
        informer.on('add', record('add'));
        informer.on('update', record('update'));
        informer.on('delete', record('delete'));
        informer.on('error', (err) => errors.push(err));
        informer.on('connect', () => connects++);

        try {
          // start() returns once the list is in the cache and the watch has its 200.
          await informer.start();
          assert.equal(lists.length, 1, 'one list');
          assert.match(lists[0] ?? '', /^\d+$/, 'the list carries a resourceVersion');
          assert.ok(informer.get('informer-before'), 'the listed team is in the cache');
          assert.ok(informer.get('admin') === undefined, 'users are not teams');
          assert.deepEqual(
            events.map((e) => [e.verb, e.name]),
            informer.list().map((t) => ['add', t.metadata?.name]),
            'one add per listed team',
          );
          events.length = 0;

          await createTeam('informer-live');
          const label = await s.api(
            'PATCH',
            `${V1}/teams/informer-live`,
            { metadata: { labels: { phase: 'two' } } },
            { 'Content-Type': 'application/merge-patch+json' },
          );
          assert.equal(label.status, 200, label.text);
          const del = await s.api('DELETE', `${V1}/teams/informer-live`);
          assert.equal(del.status, 200, del.text);

          await eventually(() => events.some((e) => e.verb === 'delete'), 'the delete event');
          const live = events.filter((e) => e.name === 'informer-live');
          assert.deepEqual(
            live.map((e) => e.verb),
            ['add', 'update', 'delete'],
          );
          assert.equal(live[1]?.labels?.['phase'], 'two');
          const rvs = live.map((e) => Number(e.resourceVersion));
          assert.ok(
            rvs[0]! > Number(lists[0]) && rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!,
            `increasing: ${rvs.join(', ')}`,
          );
          assert.equal(informer.get('informer-live'), undefined, 'gone from the cache');
          assert.ok(informer.get('informer-before'), 'the other team stays');
          // The informer is a ListWatch; its resourceVersion follows the events.
          assert.ok(informer instanceof ListWatch);
          assert.equal(informer.latestResourceVersion(), live[2]?.resourceVersion);
          assert.deepEqual(
            events.filter((e) => e.name !== 'informer-live'),
            [],
            'no events for untouched teams',
          );
          assert.equal(lists.length, 1, 'no relist');
          assert.equal(connects, 1, 'the watch stayed open');
          assert.deepEqual(errors, []);
        } finally {
          await informer.stop();
        }
      },
    );

    // Last: it stops the server.
    it(
      'SIGTERM with open watches: the watches end cleanly and the process exits 0 promptly',
      TEST,
      async () => {
        const kc = clientConfig();
        const api = kc.makeApiClient(CustomObjectsApi);
        const informer = makeInformer<KubernetesObject>(
          kc,
          `${V1}/teams`,
          async () =>
            (await api.listClusterCustomObject({
              group: GROUP,
              version: 'v1',
              plural: 'teams',
            })) as KubernetesListObject<KubernetesObject>,
        );
        informer.on('error', () => undefined); // it cannot reconnect once the server is gone
        await informer.start();
        const raw = await s.watch(`${V1}/namespaces/e2e-term/sharedsecrets?watch=true&resourceVersion=0`);
        assert.equal(raw.status, 200);
        try {
          // Well under the server's 30 s drain bound: open watches must not hold up shutdown.
          await s.stop(10_000);
          assert.equal(await raw.ended, true, 'the server ended the watch stream');
          assert.deepEqual(raw.badLines, []);
          assert.deepEqual(
            raw.events.filter((e) => e.type === 'ERROR'),
            [],
            'a shutdown ends a watch without an ERROR event',
          );
        } finally {
          raw.close();
          await informer.stop();
        }
      },
    );
  });
}
