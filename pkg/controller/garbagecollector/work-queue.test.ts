import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { WorkQueue } from './work-queue.js';

describe('WorkQueue', () => {
  it('holds an item once however often it is added, and never hands it to two workers at once', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('a');
    q.add('b');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'a');
    // Added again while being processed: queued for after, not handed out now.
    q.add('a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.length, 0);
    q.done('a');
    assert.equal(await q.get(), 'a');
  });

  it('brings a failed item back after its backoff', async () => {
    const q = new WorkQueue<string>({ baseDelayMs: 1, maxDelayMs: 5 });
    q.addRateLimited('x');
    assert.equal(q.length, 0, 'not at once');
    assert.equal(await q.get(), 'x');
  });

  it('shutDown wakes waiting workers with undefined and drops pending retries', async () => {
    const q = new WorkQueue<string>({ baseDelayMs: 10_000 });
    const waiting = q.get();
    q.addRateLimited('later');
    q.shutDown();
    assert.equal(await waiting, undefined);
    assert.equal(await q.get(), undefined);
    q.add('ignored');
    assert.equal(q.length, 0);
  });

  it('counts each item once when queued however often it is added, and each retry (workqueue metrics)', async () => {
    const counts = { added: 0, retried: 0 };
    const q = new WorkQueue<string>({
      baseDelayMs: 1,
      metrics: { added: () => counts.added++, retried: () => counts.retried++ },
    });
    q.add('a');
    q.add('a');
    const item = await q.get();
    q.add('a'); // added again while in hand: queued once it is done
    q.done(item as string);
    assert.equal(q.length, 1);
    assert.deepEqual(counts, { added: 2, retried: 0 });
    const again = await q.get();
    q.addRateLimited(again as string);
    q.done(again as string);
    assert.equal(counts.retried, 1);
    q.shutDown();
  });
});
