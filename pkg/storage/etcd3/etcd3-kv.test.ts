// Etcd3KV against a real etcd: the conditions of writes, reads at revisions,
// compaction, and watches from history, live, across an etcd restart and from a
// compacted start. Each test works under its own key prefix on one shared etcd.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEtcd } from '../../../hack/etcd.js';
import type { EtcdInstance } from '../../../hack/etcd.js';
import { CompactedError, FutureRevisionError, prefixEnd } from '../kv.js';
import type { KV, KVEvent } from '../kv.js';
import { Etcd3KV } from './etcd3-kv.js';

const WAIT_MS = 15_000;

let etcd: EtcdInstance;
let kv: Etcd3KV;
let prefixCounter = 0;

/** A key prefix no other test uses. */
function freshPrefix(): string {
  prefixCounter += 1;
  return `/registry/etcd3-kv-test/${process.pid}-${prefixCounter}/`;
}

const b = (s: string): Buffer => Buffer.from(s);

before(async () => {
  // Progress notifications every half second, so the progress test need not wait 10 minutes.
  etcd = await startEtcd({ args: ['--experimental-watch-progress-notify-interval=500ms'] });
  kv = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
});

after(async () => {
  await kv?.close();
  await etcd?.stop();
});

/** Collects what a watch delivers and lets a test wait for a condition on it. */
class Recorder {
  readonly calls: KVEvent[][] = [];
  readonly progress: number[] = [];
  error: Error | undefined;
  private waiters: Array<() => void> = [];

  readonly handlers = {
    onEvents: (events: readonly KVEvent[]) => {
      this.calls.push([...events]);
      this.wake();
    },
    onError: (err: Error) => {
      this.error = err;
      this.wake();
    },
    onProgress: (revision: number) => {
      this.progress.push(revision);
      this.wake();
    },
  };

  get events(): KVEvent[] {
    return this.calls.flat();
  }

  async until(what: string, condition: () => boolean): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!condition()) {
      if (Date.now() > deadline) {
        assert.fail(
          `timed out waiting for ${what}; got ${JSON.stringify(this.summary())}, error ${String(this.error)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.kv.key}@${e.kv.modRevision}=${e.kv.value.toString()}`);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

async function put(store: KV, key: string, value: string): Promise<number> {
  const { kv: existing } = await store.get(key);
  const res = existing
    ? await store.update(key, b(value), existing.modRevision)
    : await store.create(key, b(value));
  assert.ok(res.ok, `write of ${key} failed`);
  return res.revision;
}

/** The number of watchers etcd currently serves, from its metrics. */
async function etcdWatchers(): Promise<number> {
  const text = await (await fetch(`${etcd.endpoint}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('etcd_debugging_mvcc_watcher_total '));
  assert.ok(line, 'etcd exposes etcd_debugging_mvcc_watcher_total');
  return Number(line.split(' ')[1]);
}

describe('Etcd3KV writes', () => {
  test('create writes only a missing key and reports the existing value otherwise', async () => {
    const key = freshPrefix() + 'a';
    const before = await kv.currentRevision();
    const first = await kv.create(key, b('one'));
    assert.equal(first.ok, true);
    assert.ok(first.revision > before);

    const second = await kv.create(key, b('two'));
    assert.equal(second.ok, false);
    assert.equal(second.revision, first.revision, 'a failed create does not write');
    assert.equal(second.current?.value.toString(), 'one');
    assert.equal(second.current?.modRevision, first.revision);
    assert.equal(second.current?.createRevision, first.revision);
  });

  test('update writes only at the expected modRevision', async () => {
    const key = freshPrefix() + 'a';
    const created = await kv.create(key, b('v1'));
    const updated = await kv.update(key, b('v2'), created.revision);
    assert.equal(updated.ok, true);
    assert.ok(updated.revision > created.revision);

    const stale = await kv.update(key, b('v3'), created.revision);
    assert.equal(stale.ok, false);
    assert.equal(stale.current?.value.toString(), 'v2');
    assert.equal(stale.current?.modRevision, updated.revision);
    assert.equal(stale.current?.createRevision, created.revision);

    const missing = await kv.update(freshPrefix() + 'nope', b('x'), created.revision);
    assert.equal(missing.ok, false);
    assert.equal(missing.current, undefined);
    assert.equal((await kv.get(key)).kv?.value.toString(), 'v2');
  });

  test('delete honours the expected modRevision, 0 meaning any, and returns what it removed', async () => {
    const prefix = freshPrefix();
    const created = await kv.create(prefix + 'a', b('gone soon'));
    const wrong = await kv.delete(prefix + 'a', created.revision + 1000);
    assert.equal(wrong.ok, false);
    assert.equal(wrong.current?.value.toString(), 'gone soon');

    const removed = await kv.delete(prefix + 'a', created.revision);
    assert.equal(removed.ok, true);
    assert.ok(removed.revision > created.revision);
    assert.equal(removed.deleted?.value.toString(), 'gone soon');
    assert.equal(removed.deleted?.modRevision, created.revision);
    assert.equal((await kv.get(prefix + 'a')).kv, undefined);

    await kv.create(prefix + 'b', b('any'));
    const unconditional = await kv.delete(prefix + 'b', 0);
    assert.equal(unconditional.ok, true);
    assert.equal(unconditional.deleted?.value.toString(), 'any');

    const absent = await kv.delete(prefix + 'b', 0);
    assert.equal(absent.ok, false);
    assert.equal(absent.current, undefined);
  });
});

describe('Etcd3KV reads', () => {
  test('get reads the current value or the value at an older revision', async () => {
    const key = freshPrefix() + 'a';
    const r1 = (await kv.create(key, b('v1'))).revision;
    const r2 = (await kv.update(key, b('v2'), r1)).revision;

    const now = await kv.get(key);
    assert.equal(now.kv?.value.toString(), 'v2');
    assert.ok(now.revision >= r2);

    const then = await kv.get(key, r1);
    assert.equal(then.kv?.value.toString(), 'v1');
    assert.equal(then.revision, r1);
    assert.equal((await kv.get(key, r1 - 1)).kv, undefined, 'the key did not exist yet');
  });

  test('range reads [start, end) in key order with limit, more and count', async () => {
    const prefix = freshPrefix();
    for (const name of ['c', 'a', 'e', 'b', 'd']) await kv.create(prefix + name, b(name));
    await kv.create(prefix.slice(0, -1) + '0', b('outside')); // sorts just after the prefix range

    const all = await kv.range(prefix, prefixEnd(prefix), { count: true });
    assert.deepEqual(
      all.kvs.map((k) => k.key),
      ['a', 'b', 'c', 'd', 'e'].map((n) => prefix + n),
    );
    assert.equal(all.more, false);
    assert.equal(all.count, 5);

    const page = await kv.range(prefix + 'b', prefixEnd(prefix), { limit: 2, count: true });
    assert.deepEqual(
      page.kvs.map((k) => k.value.toString()),
      ['b', 'c'],
    );
    assert.equal(page.more, true);
    assert.equal(page.count, 4, 'count covers the whole range, not the page');

    const bounded = await kv.range(prefix + 'b', prefix + 'd');
    assert.deepEqual(
      bounded.kvs.map((k) => k.value.toString()),
      ['b', 'c'],
      'end is exclusive',
    );
    assert.equal(bounded.count, undefined, 'no count unless asked');
    assert.equal(bounded.revision, await kv.currentRevision());
  });

  test('range at a revision sees the range as it was then', async () => {
    const prefix = freshPrefix();
    await kv.create(prefix + 'a', b('a1'));
    const snapshot = await kv.create(prefix + 'b', b('b1'));
    await kv.update(prefix + 'a', b('a2'), (await kv.get(prefix + 'a')).kv?.modRevision ?? 0);
    await kv.create(prefix + 'c', b('c1'));
    await kv.delete(prefix + 'b', 0);

    const then = await kv.range(prefix, prefixEnd(prefix), { revision: snapshot.revision, count: true });
    assert.equal(then.revision, snapshot.revision);
    assert.deepEqual(
      then.kvs.map((k) => k.value.toString()),
      ['a1', 'b1'],
    );
    assert.equal(then.count, 2);

    const now = await kv.range(prefix, prefixEnd(prefix));
    assert.deepEqual(
      now.kvs.map((k) => k.value.toString()),
      ['a2', 'c1'],
    );
  });

  test('a future revision is refused with FutureRevisionError', async () => {
    const current = await kv.currentRevision();
    await assert.rejects(
      kv.range('/a', '/b', { revision: current + 100 }),
      (err: unknown) =>
        err instanceof FutureRevisionError &&
        err.requestedRevision === current + 100 &&
        err.currentRevision >= current,
    );
    await assert.rejects(kv.get('/a', current + 100), FutureRevisionError);
  });
});

describe('Etcd3KV compaction', () => {
  test('reads before the compacted revision fail with CompactedError; later ones work', async () => {
    const key = freshPrefix() + 'a';
    const r1 = (await kv.create(key, b('v1'))).revision;
    const r2 = (await kv.update(key, b('v2'), r1)).revision;
    await kv.compact(r2);

    assert.ok((await kv.compactedRevision()) >= r2);
    await assert.rejects(
      kv.get(key, r1),
      (err: unknown) =>
        err instanceof CompactedError && err.requestedRevision === r1 && err.compactedRevision >= r2,
    );
    await assert.rejects(kv.range(key, prefixEnd(key), { revision: r1 }), CompactedError);
    assert.equal(
      (await kv.get(key, r2)).kv?.value.toString(),
      'v2',
      'the compacted revision itself still reads',
    );

    await kv.compact(r1); // older than the last compaction: nothing to do, no error
    await assert.rejects(kv.compact((await kv.currentRevision()) + 100), FutureRevisionError);
  });

  test('a fresh client learns the compacted revision from etcd', async () => {
    const key = freshPrefix() + 'a';
    await kv.create(key, b('x'));
    const target = await kv.currentRevision();
    await kv.create(key + 'b', b('y'));
    await kv.compact(target);

    const other = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
    try {
      assert.equal(await other.compactedRevision(), target);
      // A compaction by someone else is noticed too.
      await kv.create(key + 'c', b('z'));
      const later = await kv.currentRevision();
      await kv.compact(later);
      assert.equal(await other.compactedRevision(), later);
    } finally {
      await other.close();
    }
  });
});

describe('Etcd3KV watch', () => {
  test('delivers history from a revision, then live changes, in order with previous values', async () => {
    const prefix = freshPrefix();
    const r1 = (await kv.create(prefix + 'a', b('a1'))).revision;
    const r2 = (await kv.update(prefix + 'a', b('a2'), r1)).revision;
    const r3 = (await kv.create(prefix + 'b', b('b1'))).revision;
    await kv.create(prefix.slice(0, -1) + '-sibling', b('not watched'));
    const rec = new Recorder();
    const watch = kv.watch(prefix, r2, rec.handlers);
    try {
      await rec.until('history', () => rec.events.length >= 2);
      const r4 = (await kv.delete(prefix + 'a', 0)).revision;
      const r5 = (await kv.update(prefix + 'b', b('b2'), r3)).revision;
      await rec.until('live events', () => rec.events.length >= 4);

      assert.deepEqual(rec.summary(), [
        `put ${prefix}a@${r2}=a2`,
        `put ${prefix}b@${r3}=b1`,
        `delete ${prefix}a@${r4}=`,
        `put ${prefix}b@${r5}=b2`,
      ]);
      const [update, create, del, modify] = rec.events;
      assert.equal(update?.prevKv?.value.toString(), 'a1');
      assert.equal(create?.prevKv, undefined, 'a create has no previous value');
      assert.equal(del?.prevKv?.value.toString(), 'a2', 'a delete carries the last value');
      assert.equal(del?.prevKv?.modRevision, r2);
      assert.equal(modify?.prevKv?.value.toString(), 'b1');
      for (const call of rec.calls) {
        assert.equal(new Set(call.map((e) => e.kv.modRevision)).size, 1, 'one revision per call');
      }
      assert.equal(rec.error, undefined);
    } finally {
      watch.cancel();
    }
  });

  test('a watch from the next revision misses nothing written right after it starts', async () => {
    const prefix = freshPrefix();
    const from = (await kv.currentRevision()) + 1;
    const rec = new Recorder();
    const watch = kv.watch(prefix, from, rec.handlers);
    try {
      for (let i = 0; i < 20; i++) await kv.create(`${prefix}k${String(i).padStart(2, '0')}`, b(String(i)));
      await rec.until('20 events', () => rec.events.length >= 20);
      assert.deepEqual(
        rec.events.map((e) => e.kv.value.toString()),
        Array.from({ length: 20 }, (_, i) => String(i)),
      );
    } finally {
      watch.cancel();
    }
  });

  test('replays a long history (more than one etcd batch) completely and in order', async () => {
    const prefix = freshPrefix();
    const from = (await kv.currentRevision()) + 1;
    const total = 1500; // etcd sends at most 1000 revisions per watch response
    let rev = (await kv.create(prefix + 'counter', b('0'))).revision;
    for (let i = 1; i < total; i++) rev = (await kv.update(prefix + 'counter', b(String(i)), rev)).revision;

    const rec = new Recorder();
    const watch = kv.watch(prefix, from, rec.handlers);
    try {
      await rec.until(`${total} events`, () => rec.events.length >= total);
      const values = rec.events.map((e) => Number(e.kv.value.toString()));
      assert.deepEqual(
        values,
        Array.from({ length: total }, (_, i) => i),
      );
    } finally {
      watch.cancel();
    }
  });

  test('a watch from a compacted revision ends with CompactedError', async () => {
    const prefix = freshPrefix();
    const r1 = (await kv.create(prefix + 'a', b('1'))).revision;
    const r2 = (await kv.update(prefix + 'a', b('2'), r1)).revision;
    await kv.compact(r2);
    const rec = new Recorder();
    kv.watch(prefix, r1, rec.handlers);
    await rec.until('an error', () => rec.error !== undefined);
    assert.ok(rec.error instanceof CompactedError, `got ${String(rec.error)}`);
    assert.equal(rec.error.requestedRevision, r1);
    assert.ok(rec.error.compactedRevision >= r2);
    assert.equal(rec.events.length, 0);
  });

  test('sends progress notifications on an idle prefix', async () => {
    const prefix = freshPrefix();
    const current = await kv.currentRevision();
    const rec = new Recorder();
    const watch = kv.watch(prefix, current + 1, rec.handlers);
    try {
      await rec.until('a progress notification', () => rec.progress.length > 0);
      assert.ok(rec.progress.every((r) => r >= current));
    } finally {
      watch.cancel();
    }
  });

  test('cancel stops delivery and releases the watcher in etcd', async () => {
    const prefix = freshPrefix();
    const baseline = await etcdWatchers();
    const rec = new Recorder();
    const watch = kv.watch(prefix, (await kv.currentRevision()) + 1, rec.handlers);
    await kv.create(prefix + 'a', b('seen'));
    await rec.until('the first event', () => rec.events.length === 1);
    assert.equal(await etcdWatchers(), baseline + 1);

    watch.cancel();
    await kv.create(prefix + 'b', b('not seen'));
    const deadline = Date.now() + WAIT_MS;
    while ((await etcdWatchers()) !== baseline && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(await etcdWatchers(), baseline, 'etcd no longer serves the cancelled watch');
    assert.deepEqual(
      rec.events.map((e) => e.kv.value.toString()),
      ['seen'],
    );
    assert.equal(rec.error, undefined, 'cancel is not an error');
  });

  test('close ends open watches with an error', async () => {
    const other = await Etcd3KV.connect({ endpoints: [etcd.endpoint] });
    const rec = new Recorder();
    other.watch(freshPrefix(), 0, rec.handlers);
    await other.close();
    await rec.until('an error', () => rec.error !== undefined);
    await assert.rejects(other.currentRevision());
  });
});

describe('Etcd3KV across an etcd restart', () => {
  test('a watch resumes where it left off, losing and repeating nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'etcd3-kv-restart-'));
    let server = await startEtcd({ dataDir });
    const client = await Etcd3KV.connect({ endpoints: [server.endpoint] });
    const rec = new Recorder();
    const prefix = freshPrefix();
    const watch = client.watch(prefix, (await client.currentRevision()) + 1, rec.handlers);
    try {
      await put(client, prefix + 'a', 'before-1');
      await put(client, prefix + 'b', 'before-2');
      await rec.until('events before the restart', () => rec.events.length >= 2);

      await server.stop();
      server = await startEtcd({ dataDir, clientPort: server.clientPort, peerPort: server.peerPort });
      // Writes as soon as etcd is back; the client's first attempts may still see the old connection fail.
      const deadline = Date.now() + WAIT_MS;
      while (true) {
        try {
          await put(client, prefix + 'a', 'after-1');
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      await put(client, prefix + 'c', 'after-2');
      await rec.until('events after the restart', () => rec.events.length >= 4);
      assert.deepEqual(
        rec.events.map((e) => e.kv.value.toString()),
        ['before-1', 'before-2', 'after-1', 'after-2'],
      );
      assert.equal(rec.error, undefined);
    } finally {
      watch.cancel();
      await client.close();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('Etcd3KV.connect', () => {
  test('gives up on an endpoint that accepts connections but never answers', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      await assert.rejects(
        Etcd3KV.connect({ endpoints: [`http://127.0.0.1:${port}`], dialTimeoutMs: 500 }),
        /did not answer/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('fails with a clear error when etcd does not answer', async () => {
    await assert.rejects(
      Etcd3KV.connect({ endpoints: ['http://127.0.0.1:1'], dialTimeoutMs: 2000 }),
      /etcd at http:\/\/127\.0\.0\.1:1 did not answer/,
    );
  });
});

/** A CA, a serving certificate for 127.0.0.1 and a client certificate, made with openssl. */
function makeCertificates(
  dir: string,
): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const file = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=etcd-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const leaf = (name: string, extensions: string): void => {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
  };
  // etcd's own gateway dials etcd with the serving certificate, so it is a client certificate too.
  leaf('server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
  };
}

describe('Etcd3KV over TLS', () => {
  test('talks to an etcd that serves TLS and demands client certificates', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'etcd3-kv-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const certs = makeCertificates(dir);
    const server = await startEtcd({
      tls: {
        caFile: certs.ca,
        certFile: certs.serverCert,
        keyFile: certs.serverKey,
        clientCertFile: certs.clientCert,
        clientKeyFile: certs.clientKey,
      },
    });
    try {
      assert.match(server.endpoint, /^https:/);
      const client = await Etcd3KV.connect({
        endpoints: [server.endpoint],
        tls: {
          ca: readFileSync(certs.ca),
          cert: readFileSync(certs.clientCert),
          key: readFileSync(certs.clientKey),
        },
      });
      try {
        const prefix = freshPrefix();
        const rec = new Recorder();
        const watch = client.watch(prefix, (await client.currentRevision()) + 1, rec.handlers);
        assert.equal((await client.create(prefix + 'a', b('secret'))).ok, true);
        assert.equal((await client.get(prefix + 'a')).kv?.value.toString(), 'secret');
        await rec.until('the event over TLS', () => rec.events.length === 1);
        watch.cancel();
      } finally {
        await client.close();
      }

      await assert.rejects(
        Etcd3KV.connect({
          endpoints: [server.endpoint],
          tls: { ca: readFileSync(certs.ca) },
          dialTimeoutMs: 3000,
        }),
        /did not answer/,
        'without a client certificate etcd refuses the connection',
      );
    } finally {
      await server.stop();
    }
  });
});
