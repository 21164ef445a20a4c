import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RevisionBatcher, RevisionWaitExpired } from './revision-batcher.js';

/**
 * A fake storage whose revision reads answer with the revision as of when they
 * started (as a linearizable read would) and stay out until the test lets them go.
 */
function fakeStorage(): {
  batcher: RevisionBatcher;
  /** Revision reads started so far, in order, each with the revision it will answer. */
  readonly started: number[];
  readonly outstanding: () => number;
  write(): void;
  answerNext(): Promise<void>;
  failNext(err: Error): Promise<void>;
} {
  let revision = 10;
  const started: number[] = [];
  const pending: { resolve: (rev: number) => void; reject: (err: Error) => void; rev: number }[] = [];
  const batcher = new RevisionBatcher(() => {
    const rev = revision;
    started.push(rev);
    return new Promise<number>((resolve, reject) => pending.push({ resolve, reject, rev }));
  });
  const settleNext = async (how: (p: (typeof pending)[number]) => void): Promise<void> => {
    const next = pending.shift();
    assert.ok(next, 'a revision read is out');
    how(next);
    // Let the answer reach the waiters and the next round start.
    await new Promise((r) => setImmediate(r));
  };
  return {
    batcher,
    started,
    outstanding: () => pending.length,
    write: () => void revision++,
    answerNext: () => settleNext((p) => p.resolve(p.rev)),
    failNext: (err) => settleNext((p) => p.reject(err)),
  };
}

test('a reader that arrives while a revision read is out never gets that answer, but the next', async () => {
  const s = fakeStorage();
  const first = s.batcher.current();
  s.write(); // acknowledged after the first read started: the later readers must see it
  const second = s.batcher.current();
  const third = s.batcher.current();
  assert.deepEqual(s.started, [10], 'the later readers wait: one read out');
  await s.answerNext();
  assert.equal(await first, 10);
  assert.deepEqual(s.started, [10, 11], 'one read for both readers that waited');
  await s.answerNext();
  assert.equal(await second, 11);
  assert.equal(await third, 11);
  const fourth = s.batcher.current();
  assert.deepEqual(s.started, [10, 11, 11], 'an idle batcher reads at once');
  await s.answerNext();
  assert.equal(await fourth, 11);
  assert.deepEqual(s.batcher.stats, { rounds: 3, served: 4 });
});

test('at most one revision read is out, and every answer is at least the revision when its reader arrived', async () => {
  const s = fakeStorage();
  const answers: Promise<void>[] = [];
  let maxOutstanding = 0;
  let x = 12345;
  let revision = 10;
  for (let step = 0; step < 300; step++) {
    // A fixed pseudo-random mix (an LCG) of arrivals, writes and answers.
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const r = (x >>> 8) % 6;
    if (r < 3) {
      const atArrival = revision;
      answers.push(
        s.batcher.current().then((answer) => {
          assert.ok(answer >= atArrival, `answered ${answer} to a reader that arrived at ${atArrival}`);
        }),
      );
    } else if (r === 3) {
      s.write();
      revision++;
    } else if (s.outstanding() > 0) await s.answerNext();
    maxOutstanding = Math.max(maxOutstanding, s.outstanding());
  }
  while (s.outstanding() > 0) await s.answerNext();
  await Promise.all(answers);
  assert.equal(maxOutstanding, 1);
  assert.ok(
    s.batcher.stats.rounds < answers.length / 2,
    `${s.batcher.stats.rounds} rounds for ${answers.length} readers`,
  );
  assert.equal(s.batcher.stats.served, answers.length);
});

test("a failed revision read fails exactly that round's readers; the next round is read anew", async () => {
  const s = fakeStorage();
  const first = assert.rejects(s.batcher.current(), /etcd unavailable/);
  const second = assert.rejects(s.batcher.current(), /still unavailable/);
  const third = assert.rejects(s.batcher.current(), /still unavailable/);
  await s.failNext(new Error('etcd unavailable'));
  await first;
  // second and third were waiting for the next round: it is out now, not failed.
  assert.equal(s.outstanding(), 1);
  await s.failNext(new Error('still unavailable'));
  await second;
  await third;
  const fourth = s.batcher.current();
  await s.answerNext();
  assert.equal(await fourth, 10);
});

test('a reader whose request runs out of time stops waiting; the others still get their round', async () => {
  const s = fakeStorage();
  const first = s.batcher.current();
  const gone = s.batcher.current(Date.now() + 20);
  const staying = s.batcher.current();
  await assert.rejects(gone, RevisionWaitExpired);
  await s.answerNext();
  assert.equal(await first, 10);
  await s.answerNext();
  assert.equal(await staying, 10);
  assert.equal(s.batcher.stats.served, 2, 'the reader that gave up was not served');
});

test('a round whose every reader gave up is never sent', async () => {
  const s = fakeStorage();
  const first = s.batcher.current();
  const gone = s.batcher.current(Date.now() + 20);
  await assert.rejects(gone, RevisionWaitExpired);
  await s.answerNext();
  assert.equal(await first, 10);
  assert.deepEqual(s.started, [10], 'no read for a round nobody waits for');
});

test('a reader in flight that gives up is answered no more; the round still answers the rest', async () => {
  const s = fakeStorage();
  const gone = s.batcher.current(Date.now() + 20);
  const staying = s.batcher.current();
  await assert.rejects(gone, RevisionWaitExpired);
  await s.answerNext(); // the round `gone` was in: nobody left to answer
  await s.answerNext();
  assert.equal(await staying, 10);
  assert.deepEqual(s.batcher.stats, { rounds: 2, served: 1 });
});

test('a read that throws at once fails its round instead of the caller', async () => {
  let calls = 0;
  const batcher = new RevisionBatcher(() => {
    calls++;
    if (calls === 1) throw new Error('no connection');
    return Promise.resolve(5);
  });
  await assert.rejects(batcher.current(), /no connection/);
  assert.equal(await batcher.current(), 5);
});

test('a reader stops waiting at its deadline, in flight or queued; the rounds still answer the rest', async () => {
  const s = fakeStorage();
  const soon = Date.now() + 30;
  const inFlight = s.batcher.current(soon);
  const staying = s.batcher.current(Date.now() + 60_000);
  const queued = s.batcher.current(soon);
  const patient = s.batcher.current();
  await assert.rejects(inFlight, RevisionWaitExpired);
  await assert.rejects(queued, RevisionWaitExpired);
  await s.answerNext(); // inFlight's round: nobody left in it
  await s.answerNext();
  assert.equal(await staying, 10);
  assert.equal(await patient, 10);
  assert.deepEqual(s.batcher.stats, { rounds: 2, served: 2 });
});

test('a reader already past its deadline fails at once, without a read', async () => {
  const s = fakeStorage();
  await assert.rejects(s.batcher.current(Date.now() - 1), RevisionWaitExpired);
  assert.deepEqual(s.started, []);
});

test("a later reader with an earlier deadline is not held to the first reader's timer", async () => {
  const s = fakeStorage();
  const first = s.batcher.current(Date.now() + 60_000);
  const hurried = s.batcher.current(Date.now() + 20);
  await assert.rejects(hurried, RevisionWaitExpired);
  await s.answerNext();
  assert.equal(await first, 10);
});
