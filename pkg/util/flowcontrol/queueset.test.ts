import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FakeClock } from './clock.js';
import { QueueSet, type Decision, type QueueSetConfig, type RejectReason, type Seat } from './queueset.js';

const CONFIG: QueueSetConfig = {
  concurrencyLimit: 2,
  totalQueueLimit: 200,
  queueLengthLimit: 50,
  queueWaitLimitMs: 15_000,
};

/** Settles the promise callbacks queued by the queue set. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function seatOf(d: Decision): Seat {
  assert.ok(d.admitted, `expected a seat, got ${d.admitted ? '' : d.reason}`);
  return d.seat;
}

describe('QueueSet', () => {
  it('admits up to the limit at once, queues the rest, and gives a released seat to the next', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet(CONFIG, {}, clock);
    const a = seatOf((await qs.admit('u1')) as Decision);
    seatOf((await qs.admit('u2')) as Decision);
    const third: { decision?: Decision } = {};
    void Promise.resolve(qs.admit('u3')).then((d) => (third.decision = d));
    await tick();
    assert.equal(third.decision, undefined, 'the third request waits: both seats are taken');
    assert.equal(qs.waitingCount, 1);
    a.release();
    a.release(); // a second release gives nothing away
    await tick();
    assert.ok((third.decision as Decision | undefined)?.admitted, "a released seat goes to the waiting request");
    assert.equal(qs.executingCount, 2);
    assert.equal(qs.waitingCount, 0);
  });

  it("serves a light user's requests between a flooding user's, not after them", async () => {
    const clock = new FakeClock();
    const qs = new QueueSet(CONFIG, {}, clock);
    const order: string[] = [];
    const executing: Seat[] = [];
    const submit = (flow: string): void => {
      void Promise.resolve(qs.admit(flow)).then((d) => {
        order.push(flow);
        executing.push(seatOf(d));
      });
    };
    for (let i = 0; i < 30; i++) submit('flood');
    await tick();
    for (let i = 0; i < 5; i++) submit('light');
    await tick();
    // Serve: each executing request takes 10 ms, then frees its seat.
    while (executing.length > 0) {
      clock.advance(10);
      (executing.shift() as Seat).release();
      await tick();
    }
    assert.equal(order.length, 35);
    const lastLight = order.lastIndexOf('light');
    // FIFO would serve the light user last (index 34); fair queuing interleaves it
    // with the flood from the moment it arrives.
    assert.ok(lastLight < 15, `light user's last request served at ${lastLight}: ${order.join(',')}`);
  });

  it("rejects with queue-full once a flow's queue holds its limit, and serves other flows still", async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1, queueLengthLimit: 3 }, {}, clock);
    seatOf((await qs.admit('u')) as Decision);
    for (let i = 0; i < 3; i++) void qs.admit('u');
    const fourth = await qs.admit('u');
    assert.deepEqual(fourth, { admitted: false, reason: 'queue-full' });
    assert.equal(qs.waitingCount, 3);
    void qs.admit('other');
    assert.equal(qs.waitingCount, 4, "another user's request still queues");
  });

  it('rejects with queue-full once all queues together hold the total limit', async () => {
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1, totalQueueLimit: 4 }, {}, new FakeClock());
    seatOf((await qs.admit('a')) as Decision);
    for (const flow of ['b', 'c', 'd', 'e']) void qs.admit(flow);
    assert.deepEqual(await qs.admit('f'), { admitted: false, reason: 'queue-full' });
  });

  it('rejects a request with time-out once it waited the wait limit, and forgets it', async () => {
    const clock = new FakeClock();
    const rejected: [RejectReason, number][] = [];
    const qs = new QueueSet(
      { ...CONFIG, concurrencyLimit: 1, queueWaitLimitMs: 1000 },
      { rejected: (reason, waited) => rejected.push([reason, waited]) },
      clock,
    );
    const seat = seatOf((await qs.admit('u1')) as Decision);
    const waiting = qs.admit('u2');
    clock.advance(999);
    await tick();
    assert.equal(qs.waitingCount, 1);
    clock.advance(1);
    assert.deepEqual(await waiting, { admitted: false, reason: 'time-out' });
    assert.deepEqual(rejected, [['time-out', 1000]]);
    assert.equal(qs.waitingCount, 0);
    seat.release();
    assert.equal(qs.executingCount, 0, 'the timed-out request got no seat later');
  });

  it('removes a waiting request whose client went away (cancelled), and the seat goes to the next', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1 }, {}, clock);
    const seat = seatOf((await qs.admit('u1')) as Decision);
    const gone = new AbortController();
    const first = qs.admit('u2', () => gone.signal);
    const second = qs.admit('u3');
    gone.abort();
    assert.deepEqual(await first, { admitted: false, reason: 'cancelled' });
    seat.release();
    assert.ok((await second).admitted);
    assert.equal(qs.executingCount, 1);
    assert.equal(qs.waitingCount, 0);
  });

  it('without queuing is a plain concurrency limit (concurrency-limit)', async () => {
    const qs = new QueueSet({ ...CONFIG, totalQueueLimit: 0 }, {}, new FakeClock());
    seatOf((await qs.admit('a')) as Decision);
    const second = seatOf((await qs.admit('a')) as Decision);
    assert.deepEqual(await qs.admit('b'), { admitted: false, reason: 'concurrency-limit' });
    second.release();
    assert.ok((await qs.admit('b')).admitted);
  });

  it('tells the observer of waiting and executing counts and of the wait', async () => {
    const clock = new FakeClock();
    const seen = { waiting: [] as number[], executing: [] as number[], waited: [] as number[] };
    const qs = new QueueSet(
      { ...CONFIG, concurrencyLimit: 1 },
      {
        waiting: (n) => seen.waiting.push(n),
        executing: (n) => seen.executing.push(n),
        dispatched: (ms) => seen.waited.push(ms),
      },
      clock,
    );
    const seat = seatOf((await qs.admit('a')) as Decision);
    const next = qs.admit('b');
    clock.advance(250);
    seat.release();
    seatOf(await next);
    assert.deepEqual(seen.waiting, [1, 0]);
    assert.deepEqual(seen.executing, [1, 0, 1]);
    assert.deepEqual(seen.waited, [0, 250]);
  });
});
