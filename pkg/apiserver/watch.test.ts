import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';

import type { KubeObject, Table } from '../apis/meta/types.js';
import { EventMemo, type StorageWatchEvent } from '../storage/interfaces.js';
import { RequestScope } from './scope.js';
import {
  ADMIN,
  call,
  FakeStorage,
  GROUP,
  openWatch,
  RecordingLogger,
  resourceInfo,
  startTestServer,
  type TestServer,
} from './testing/fakes.js';
import { WatchServer } from './watch.js';

// Backstop only: a broken stream end would otherwise hang the run.
const SUITE = { timeout: 30_000 };

const ROOT = `/apis/${GROUP}/v1`;

// Every test runs against iterated watchers and against pushing ones (Watcher.receive,
// the watch cache's delivery): the wire must be the same.
const DELIVERIES = [
  { label: '', push: false },
  { label: ' (pushed)', push: true },
] as const;
type Delivery = (typeof DELIVERIES)[number];

function pushing(delivery: Delivery): { prepare: (...storages: FakeStorage[]) => void } {
  return {
    prepare: (...storages) => {
      for (const storage of storages) storage.pushWatchers = delivery.push;
    },
  };
}

function team(name: string, rv: string): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'Team',
    metadata: { name, resourceVersion: rv },
    spec: { color: name },
  };
}

interface Event<T = KubeObject> {
  type: string;
  object: T;
}

for (const delivery of DELIVERIES)
  describe(`watch streaming${delivery.label}`, SUITE, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(pushing(delivery));
    });
    after(async () => {
      await s.close();
    });
    beforeEach(() => {
      s.teams.calls.length = 0;
      s.authorizer.asked.length = 0;
    });

    it('streams one compact JSON event per line, headers first', async () => {
      const next = s.teams.nextWatcher();
      // curl would get pretty JSON anywhere else; watch frames are never indented.
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true&resourceVersion=5`, {
        headers: { 'user-agent': 'curl/8' },
      });
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'application/json');
      assert.equal(stream.headers['transfer-encoding'], 'chunked');
      assert.equal(stream.headers['cache-control'], 'no-cache, private');
      const watcher = await next;
      assert.equal(s.teams.lastCall().listOptions?.resourceVersion, '5');
      assert.equal(s.authorizer.asked.at(-1)?.verb, 'watch');

      watcher.push({ type: 'ADDED', object: team('a', '6') });
      watcher.push({ type: 'MODIFIED', object: team('a', '7') });
      watcher.push({
        type: 'BOOKMARK',
        object: { kind: 'Team', apiVersion: `${GROUP}/v1`, metadata: { resourceVersion: '8' } },
      });
      const lines = [await stream.nextLine(), await stream.nextLine(), await stream.nextLine()];
      for (const line of lines) assert.doesNotMatch(line ?? '', /\n|^\s|": /);
      const events = lines.map((l) => JSON.parse(l ?? '') as Event);
      assert.deepEqual(
        events.map((e) => [e.type, e.object.metadata.resourceVersion]),
        [
          ['ADDED', '6'],
          ['MODIFIED', '7'],
          ['BOOKMARK', '8'],
        ],
      );
      assert.deepEqual(events[0]?.object, team('a', '6'));
      stream.abort();
      await watcher.whenStopped;
    });

    it('sends a shared event, encoded once, to every stream in order with unshared ones', async () => {
      const nextA = s.teams.nextWatcher();
      const a = await openWatch(s.url, `${ROOT}/teams?watch=true`);
      const watcherA = await nextA;
      const nextB = s.teams.nextWatcher();
      const b = await openWatch(s.url, `${ROOT}/teams?watch=true`);
      const watcherB = await nextB;
      const shared: StorageWatchEvent = { type: 'ADDED', object: team('s', '9'), shared: new EventMemo() };
      for (const w of [watcherA, watcherB]) {
        w.push({ type: 'ADDED', object: team('before', '8') });
        w.push(shared);
        w.push({ type: 'MODIFIED', object: team('after', '10') });
      }
      for (const stream of [a, b]) {
        const events = [await stream.nextLine(), await stream.nextLine(), await stream.nextLine()].map(
          (l) => JSON.parse(l ?? '') as Event,
        );
        assert.deepEqual(
          events.map((e) => [e.type, e.object.metadata.name]),
          [
            ['ADDED', 'before'],
            ['ADDED', 's'],
            ['MODIFIED', 'after'],
          ],
        );
        assert.deepEqual(events[1]?.object, team('s', '9'));
        stream.abort();
      }
      await watcherA.whenStopped;
      await watcherB.whenStopped;
    });

    it('sends many shared events dispatched in one tick once each, in order', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`);
      const watcher = await next;
      const names = Array.from({ length: 10 }, (_, i) => `t${i}`);
      for (const [i, name] of names.entries())
        watcher.push({ type: 'ADDED', object: team(name, String(20 + i)), shared: new EventMemo() });
      const got: string[] = [];
      for (let i = 0; i < names.length; i++)
        got.push((JSON.parse((await stream.nextLine()) ?? '') as Event).object.metadata.name ?? '');
      assert.deepEqual(got, names);
      stream.abort();
      await watcher.whenStopped;
    });

    it('ends the stream after an ERROR event', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=1`);
      const watcher = await next;
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'too old resource version: 1 (5)',
        reason: 'Expired',
        code: 410,
      };
      watcher.push({ type: 'ERROR', object: status as unknown as KubeObject });
      watcher.push({ type: 'ADDED', object: team('late', '9') });
      const rest = await stream.rest();
      assert.deepEqual(
        rest.map((l) => JSON.parse(l) as Event<unknown>),
        [{ type: 'ERROR', object: status }],
      );
      await watcher.whenStopped;
    });

    it('ends cleanly, without an ERROR, at timeoutSeconds', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true&timeoutSeconds=1`);
      const watcher = await next;
      watcher.push({ type: 'ADDED', object: team('a', '2') });
      const rest = await stream.rest();
      assert.deepEqual(
        rest.map((l) => (JSON.parse(l) as Event).type),
        ['ADDED'],
      );
      await watcher.whenStopped;
      assert.equal(s.teams.lastCall().listOptions?.timeoutSeconds, 1);
    });

    it('stops the watcher when the client goes away', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`);
      const watcher = await next;
      watcher.push({ type: 'ADDED', object: team('a', '2') });
      await stream.nextLine();
      assert.equal(watcher.stopped, false);
      stream.abort();
      await watcher.whenStopped;
      assert.equal(watcher.stopped, true);
    });

    it('ends the stream when the registry ends the watch', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`);
      const watcher = await next;
      watcher.push({ type: 'ADDED', object: team('a', '2') });
      watcher.finish();
      assert.equal((await stream.rest()).length, 1);
    });

    it('watches a single object through the deprecated /watch/ path and namespaces', async () => {
      const next = s.secrets.nextWatcher();
      const stream = await openWatch(
        s.url,
        `${ROOT}/watch/namespaces/ns1/sharedsecrets/s1?fieldSelector=metadata.namespace%3Dns1`,
      );
      assert.equal(stream.status, 200);
      await next;
      const last = s.secrets.lastCall();
      assert.equal(last.ctx.namespace, 'ns1');
      assert.equal(last.listOptions?.fieldSelector, 'metadata.namespace=ns1,metadata.name=s1');
      assert.equal(s.authorizer.asked.at(-1)?.name, 's1');
      stream.abort();

      const all = s.secrets.nextWatcher();
      const everywhere = await openWatch(s.url, `${ROOT}/watch/sharedsecrets`);
      assert.equal(everywhere.status, 200);
      await all;
      assert.equal(s.secrets.lastCall().ctx.namespace, '');
      everywhere.abort();
    });

    it('refuses YAML watches with 406 and the stream media types', async () => {
      const res = await call(s.url, `${ROOT}/teams?watch=true`, { headers: { accept: 'application/yaml' } });
      assert.equal(res.status, 406);
      assert.equal(
        res.json<{ message: string }>().message,
        'only the following media types are accepted: application/json;stream=watch',
      );
      assert.equal(s.teams.calls.length, 0);
    });

    it('sends a one-row Table per event, column definitions only on the first', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`, {
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
      });
      const watcher = await next;
      watcher.push({ type: 'ADDED', object: team('a', '2') });
      watcher.push({
        type: 'BOOKMARK',
        object: { kind: 'Team', apiVersion: `${GROUP}/v1`, metadata: { resourceVersion: '3' } },
      });
      watcher.push({ type: 'MODIFIED', object: team('a', '4') });
      const events = [await stream.nextLine(), await stream.nextLine(), await stream.nextLine()].map(
        (l) => JSON.parse(l ?? '') as Event<Table & KubeObject>,
      );
      assert.equal(events[0]?.object.kind, 'Table');
      assert.equal(events[0]?.object.columnDefinitions.length, 2);
      assert.deepEqual(
        events[0]?.object.rows.map((r) => r.cells),
        [['a', 'a']],
      );
      assert.equal(events[1]?.type, 'BOOKMARK');
      assert.equal(events[1]?.object.kind, 'Team');
      assert.equal(events[2]?.object.kind, 'Table');
      assert.deepEqual(events[2]?.object.columnDefinitions, []);
      assert.equal(events[2]?.object.rows.length, 1);
      stream.abort();
    });

    it('sends PartialObjectMetadata events, bookmarks included, errors untouched', async () => {
      const next = s.teams.nextWatcher();
      const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`, {
        headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' },
      });
      const watcher = await next;
      watcher.push({ type: 'ADDED', object: team('a', '2') });
      watcher.push({
        type: 'BOOKMARK',
        object: {
          kind: 'Team',
          apiVersion: `${GROUP}/v1`,
          metadata: { resourceVersion: '3', annotations: { 'k8s.io/initial-events-end': 'true' } },
        },
      });
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'gone',
        reason: 'Expired',
        code: 410,
      };
      watcher.push({ type: 'ERROR', object: status as unknown as KubeObject });
      const events = (await stream.rest()).map((l) => JSON.parse(l) as Event<Record<string, unknown>>);
      assert.deepEqual(events[0], {
        type: 'ADDED',
        object: {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'a', resourceVersion: '2' },
        },
      });
      assert.deepEqual(events[1]?.object, {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '3', annotations: { 'k8s.io/initial-events-end': 'true' } },
      });
      assert.deepEqual(events[2], { type: 'ERROR', object: status });
    });

    it('turns a registry failure mid-stream into a final ERROR event', async () => {
      const storage = s.teams as unknown as { watch: unknown };
      const original = storage.watch;
      storage.watch = async () => ({
        stop: () => undefined,
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new Error('etcd connection lost')),
        }),
      });
      try {
        const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`);
        const events = (await stream.rest()).map(
          (l) => JSON.parse(l) as Event<{ code: number; reason: string; message: string }>,
        );
        assert.equal(events.length, 1);
        assert.equal(events[0]?.type, 'ERROR');
        assert.equal(events[0]?.object.code, 500);
        assert.doesNotMatch(events[0]?.object.message ?? '', /etcd/);
      } finally {
        storage.watch = original;
      }
    });

    it('answers errors before the stream starts as plain Status responses', async () => {
      const storage = s.teams as unknown as { watch: unknown };
      const original = storage.watch;
      const { newInvalid } = await import('../apis/meta/errors.js');
      storage.watch = async () => {
        throw newInvalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
          {
            type: 'FieldValueForbidden',
            field: 'sendInitialEvents',
            detail: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          },
        ]);
      };
      try {
        const res = await call(s.url, `${ROOT}/teams?watch=true&sendInitialEvents=true`);
        assert.equal(res.status, 422);
        assert.equal(res.json<{ reason: string }>().reason, 'Invalid');
      } finally {
        storage.watch = original;
      }
    });
  });

for (const delivery of DELIVERIES)
  describe(`watch timeouts, backpressure and shutdown${delivery.label}`, SUITE, () => {
    it('ends a watch without timeoutSeconds within [minRequestTimeout, 2×)', async () => {
      const s = await startTestServer({ ...pushing(delivery), minRequestTimeoutSeconds: 0.2 });
      try {
        const next = s.teams.nextWatcher();
        const stream = await openWatch(s.url, `${ROOT}/teams?watch=true`);
        const watcher = await next;
        await stream.ended;
        await watcher.whenStopped;
      } finally {
        await s.close();
      }
    });

    it('ends every open watch cleanly on shutdown, fails readyz, and resolves when requests are done', async () => {
      const s = await startTestServer(pushing(delivery));
      try {
        const w1 = s.teams.nextWatcher();
        const a = await openWatch(s.url, `${ROOT}/teams?watch=true`);
        const watcherA = await w1;
        const w2 = s.secrets.nextWatcher();
        const b = await openWatch(s.url, `${ROOT}/namespaces/ns1/sharedsecrets?watch=true`);
        const watcherB = await w2;
        watcherA.push({ type: 'ADDED', object: team('a', '2') });
        await a.nextLine();

        const done = s.handler.shutdown();
        const [restA, restB] = await Promise.all([a.rest(), b.rest()]);
        // Clean ends: no ERROR event.
        assert.deepEqual(restA, []);
        assert.deepEqual(restB, []);
        await Promise.all([watcherA.whenStopped, watcherB.whenStopped]);
        await done;

        const ready = await call(s.url, '/readyz?verbose');
        assert.equal(ready.status, 500);
        assert.match(ready.text, /\[-\]shutdown failed: reason withheld/);
        const late = await call(s.url, `${ROOT}/teams?watch=true`);
        assert.equal(late.status, 503);
        // Ordinary requests are still served while the listener drains.
        assert.equal((await call(s.url, `${ROOT}/teams`)).status, 200);
      } finally {
        await s.close();
      }
    });

    for (const shared of [false, true])
      it(`cuts off a client that stops reading instead of buffering for it${shared ? ' (shared events)' : ''}`, async () => {
        const logger = new RecordingLogger();
        const watches = new WatchServer({ minRequestTimeoutSeconds: 60, logger, drainTimeoutMs: 200 });
        const storage = new FakeStorage(resourceInfo('teams', 'Team', false));
        storage.pushWatchers = delivery.push;
        const server = createServer((req, res) => {
          const scope = new RequestScope(req, res, req.url ?? '/', '', logger);
          scope.user = ADMIN;
          res.once('close', () => scope.markClosed());
          void watches.serve(scope, storage, {}, { mediaType: 'application/json', pretty: false }, undefined);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
        try {
          const next = storage.nextWatcher();
          socket.write('GET /watch HTTP/1.1\r\nHost: x\r\n\r\n');
          const watcher = await next;
          // The client reads nothing from here on.
          socket.pause();
          const big = 'x'.repeat(64 * 1024);
          for (let i = 0; i < 1000; i++)
            watcher.push({
              type: 'ADDED',
              object: { metadata: { name: `t${i}` }, data: big },
              ...(shared ? { shared: new EventMemo() } : {}),
            });
          await watcher.whenStopped;
          assert.ok(
            watcher.pending > 0,
            'events the client could not take stay with the watcher, not in our memory',
          );
          assert.ok(logger.lines.some((l) => l.msg === 'watch client is not reading; closing its stream'));
          assert.equal(watches.openWatches, 0);
        } finally {
          socket.destroy();
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        }
      });
  });

for (const delivery of DELIVERIES)
  describe(`HEAD with watch${delivery.label}`, SUITE, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer(pushing(delivery));
    });
    after(async () => {
      await s.close();
    });

    /** The whole raw response of one request on its own connection. */
    function rawResponse(method: string, path: string): Promise<string> {
      const port = Number(new URL(s.url).port);
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\nConnection: close\r\n\r\n`,
          );
        });
        let data = '';
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => (data += d));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
    }

    // Bytes after a HEAD response's headers would be read as the next response on a
    // kept-alive connection.
    for (const shared of [false, true])
      it(`sends headers and no body bytes${shared ? ' (shared events)' : ''}`, async () => {
        const next = s.teams.nextWatcher();
        const response = rawResponse('HEAD', `${ROOT}/teams?watch=true&timeoutSeconds=1`);
        const watcher = await next;
        watcher.push({
          type: 'ADDED',
          object: { apiVersion: `${GROUP}/v1`, kind: 'Team', metadata: { name: 'a', resourceVersion: '2' } },
          ...(shared ? { shared: new EventMemo() } : {}),
        });
        const text = await response;
        assert.match(text, /^HTTP\/1\.1 200/);
        assert.equal(text.slice(text.indexOf('\r\n\r\n') + 4), '', 'no body after the headers');
      });
  });
