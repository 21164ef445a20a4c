import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KV } from './kv.js';
import { MeteredKV } from './metered-kv.js';
import { registry } from '../metrics/registry.js';
import { sample } from '../metrics/testing.js';

/** A KV whose reads answer nothing and whose every other call fails: only the metering is under test. */
function backend(): KV {
  const fail = (): Promise<never> => Promise.reject(new Error('refused'));
  return {
    get: () => Promise.resolve(undefined),
    range: () => Promise.resolve({ kvs: [], revision: 1, more: false, count: 0 }),
    create: fail,
    update: fail,
    delete: fail,
    watch: () => {
      throw new Error('not watched here');
    },
    currentRevision: () => Promise.resolve(7),
    compactedRevision: () => Promise.resolve(0),
    compact: fail,
    close: () => Promise.resolve(),
  } as unknown as KV;
}

async function scrape(name: string, labels: Record<string, string>): Promise<number> {
  return sample(await registry.metrics(), name, labels) ?? 0;
}

test('every storage call counts under its operation and the group and resource of its key', async () => {
  const kv = new MeteredKV(backend(), '/meteredtest');
  const users = { operation: 'get', group: 'meter.example', resource: 'users' };
  const before = await scrape('etcd_requests_total', users);
  await kv.get('/meteredtest/meter.example/users/alice');
  await kv.get('/meteredtest/meter.example/users/bob');
  assert.equal(await scrape('etcd_requests_total', users), before + 2);
  assert.equal(await scrape('etcd_request_duration_seconds_count', users), before + 2);
  assert.equal(await scrape('etcd_request_duration_seconds_bucket', { ...users, le: '+Inf' }), before + 2);
  // The object's name is never a label.
  assert.ok(!(await registry.metrics()).includes('alice'));

  await kv.range('/meteredtest/meter.example/teams/', '/meteredtest/meter.example/teams0', { count: true });
  assert.equal(
    await scrape('etcd_requests_total', {
      operation: 'listWithCount',
      group: 'meter.example',
      resource: 'teams',
    }),
    1,
  );
  // A key outside `<prefix>/<group>/<resource>` is labelled with empty group and resource.
  await kv.get('/elsewhere/x');
  assert.ok((await scrape('etcd_requests_total', { operation: 'get', group: '', resource: '' })) >= 1);
});

test('a failed storage call counts as an error as well as a request, and the error still reaches the caller', async () => {
  const kv = new MeteredKV(backend(), '/meteredfail/');
  const labels = { operation: 'create', group: 'meter.example', resource: 'teams' };
  assert.equal(await scrape('etcd_request_errors_total', labels), 0);
  await assert.rejects(kv.create('/meteredfail/meter.example/teams/t1', Buffer.from('{}')), /refused/);
  await assert.rejects(kv.create('/meteredfail/meter.example/teams/t2', Buffer.from('{}')), /refused/);
  assert.equal(await scrape('etcd_request_errors_total', labels), 2);
  assert.equal(await scrape('etcd_requests_total', labels), 2);
  // A successful operation has no error series at all, as prom-client shows a series only once counted.
  const text = await registry.metrics();
  assert.ok(!/etcd_request_errors_total\{operation="get"/.test(text));
});
