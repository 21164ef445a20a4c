import assert from 'node:assert/strict';
import { test } from 'node:test';

import { eventually } from './eventually.js';
import { Reflector, type ListerWatcher, type WatchEnd } from './reflector.js';

type WatchScript = (
  rv: string,
  observe: (rv: string) => void,
  signal: AbortSignal,
) => Promise<WatchEnd> | WatchEnd;

/** A lister-watcher that plays scripted lists and watches and records what it was asked. */
class Scripted implements ListerWatcher {
  lists = 0;
  readonly watchedFrom: string[] = [];
  readonly signals: AbortSignal[] = [];

  constructor(
    private readonly listScript: (n: number) => string,
    private readonly watchScripts: WatchScript[],
  ) {}

  async list(): Promise<string> {
    this.lists++;
    return this.listScript(this.lists);
  }

  async watch(rv: string, observe: (rv: string) => void, signal: AbortSignal): Promise<WatchEnd> {
    this.watchedFrom.push(rv);
    this.signals.push(signal);
    const script = this.watchScripts[this.watchedFrom.length - 1] ?? untilAborted;
    return script(rv, observe, signal);
  }
}

/** A watch that delivers nothing and ends only when stopped. */
const untilAborted: WatchScript = (_rv, _observe, signal) =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve({ events: 0 })));

test('a watch that ends cleanly is resumed from the last resourceVersion it delivered, without a list', async (t) => {
  const lw = new Scripted(
    () => '10',
    [
      (_rv, observe) => {
        observe('11');
        observe('12');
        return { events: 2 };
      },
    ],
  );
  const r = new Reflector({ listerWatcher: lw, initialBackoffMs: 1, maxBackoffMs: 1 });
  t.after(() => r.stop());
  r.start();
  await eventually(async () => assert.deepEqual(lw.watchedFrom, ['10', '12']));
  assert.equal(lw.lists, 1);
});

test('410 Gone relists and watches from the new list', async (t) => {
  const lw = new Scripted((n) => String(n * 10), [() => ({ events: 1, relist: true })]);
  const r = new Reflector({ listerWatcher: lw, initialBackoffMs: 1, maxBackoffMs: 1 });
  t.after(() => r.stop());
  r.start();
  await eventually(async () => assert.deepEqual(lw.watchedFrom, ['10', '20']));
  assert.equal(lw.lists, 2);
});

test('failures back off, doubling up to the cap; a healthy watch resets it; an ended watch resumes', async (t) => {
  const waits: number[] = [];
  let failLists = 4;
  const lw = new Scripted(
    (n) => {
      if (failLists-- > 0) throw new Error(`list ${n} failed`);
      return String(n);
    },
    [
      // One healthy watch (it delivered an event), then it breaks.
      (_rv, observe) => {
        observe('100');
        return { events: 1, error: new Error('connection reset') };
      },
    ],
  );
  const r = new Reflector({
    listerWatcher: lw,
    initialBackoffMs: 5,
    maxBackoffMs: 20,
    onFailure: (_err, retryInMs) => waits.push(retryInMs),
  });
  t.after(() => r.stop());
  r.start();
  await eventually(async () => assert.equal(lw.watchedFrom.length, 2));
  // Four failed lists: 5, 10, 20, 20 (capped); then the healthy watch's failure starts over at 5.
  assert.deepEqual(waits, [5, 10, 20, 20, 5]);
  // The watch failed with an error, not with Gone: it resumes from what it delivered.
  assert.deepEqual(lw.watchedFrom, ['5', '100']);
  assert.equal(lw.lists, 5);
});

test('a watch that ends at once with nothing to say waits a backoff instead of spinning', async (t) => {
  const lw = new Scripted(() => '1', Array.from({ length: 1000 }, () => () => ({ events: 0 })));
  const r = new Reflector({ listerWatcher: lw, initialBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 });
  t.after(() => r.stop());
  r.start();
  await eventually(async () => assert.equal(lw.watchedFrom.length, 1));
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lw.watchedFrom.length, 1);
});

test('stop ends the current watch at once', async () => {
  const lw = new Scripted(() => '7', []);
  const r = new Reflector({ listerWatcher: lw, initialBackoffMs: 1, maxBackoffMs: 1 });
  r.start();
  await eventually(async () => assert.equal(lw.signals.length, 1));
  await r.stop();
  assert.equal(lw.signals[0]?.aborted, true);
  assert.equal(lw.lists, 1);
});

test('stop ends a backoff wait at once and nothing runs after it', async () => {
  const waits: number[] = [];
  const lw = new Scripted(() => {
    throw new Error('down');
  }, []);
  const r = new Reflector({
    listerWatcher: lw,
    initialBackoffMs: 3_600_000,
    maxBackoffMs: 3_600_000,
    onFailure: (_err, retryInMs) => waits.push(retryInMs),
  });
  r.start();
  await eventually(async () => assert.equal(waits.length, 1));
  // Resolves although the wait has an hour to go (the test's own timeout is the bound).
  await r.stop();
  assert.equal(lw.lists, 1);
  assert.equal(lw.watchedFrom.length, 0);
});
