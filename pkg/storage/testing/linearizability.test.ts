import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinearizabilityChecker, type ReadRecord, type WriteRecord } from './linearizability.js';

const write = (
  key: string,
  revision: number,
  invokedAt: number,
  answeredAt: number,
  deleted = false,
): WriteRecord => ({
  key,
  revision,
  deleted,
  invokedAt,
  answeredAt,
});

const get = (key: string, seen: number | undefined, invokedAt: number, answeredAt: number): ReadRecord => ({
  scope: { key },
  observed: new Map(seen === undefined ? [] : [[key, seen]]),
  invokedAt,
  answeredAt,
});

const list = (
  prefix: string,
  seen: Record<string, number>,
  invokedAt: number,
  answeredAt: number,
  listRevision?: number,
): ReadRecord => ({
  scope: { prefix },
  observed: new Map(Object.entries(seen)),
  invokedAt,
  answeredAt,
  ...(listRevision !== undefined ? { listRevision } : {}),
});

const K = '/r/w/k';

test('a history whose reads see every earlier write, and reads overlapping a write see either side, passes', () => {
  const writes = [write(K, 3, 1, 2), write(K, 7, 10, 20)];
  const reads = [
    get(K, undefined, 0, 0.5), // before anything was written
    get(K, 3, 3, 4),
    get(K, 3, 11, 12), // overlaps the second write: the old value is fine
    get(K, 7, 13, 14), // ... and so is the new one
    get(K, 7, 21, 22),
    list('/r/w/', { [K]: 7 }, 23, 24, 7),
  ];
  assert.deepEqual(new LinearizabilityChecker(writes).check(reads), []);
});

test('a read that misses a write acknowledged before it began fails the check', () => {
  // What a batcher handing a late reader the revision read already in flight allows:
  // that read was answered (at revision 3) before the write at 7 was acknowledged,
  // and the reader, invoked after the acknowledgement, is served the state at 3.
  const writes = [write(K, 3, 1, 2), write(K, 7, 5, 6)];
  const problems = new LinearizabilityChecker(writes).check([get(K, 3, 7, 9)]);
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? '', /misses a write acknowledged before it began \(revision 7\)/);
});

test('a read that sees a write invoked after it answered fails the check', () => {
  const writes = [write(K, 3, 1, 2), write(K, 7, 10, 11)];
  const problems = new LinearizabilityChecker(writes).check([get(K, 7, 3, 4)]);
  assert.match(problems.join('\n'), /sees a write invoked after it answered/);
});

test('a read that goes back before a read that answered before it began fails the check', () => {
  // The write at 7 is still in flight for both reads: each alone may see either value,
  // but not the new one and then the old one.
  const writes = [write(K, 3, 1, 2), write(K, 7, 5, 30)];
  const problems = new LinearizabilityChecker(writes).check([get(K, 7, 6, 7), get(K, 3, 8, 9)]);
  assert.match(problems.join('\n'), /goes back before a read that answered before it began/);
  // In the other order they are fine.
  assert.deepEqual(new LinearizabilityChecker(writes).check([get(K, 3, 6, 7), get(K, 7, 8, 9)]), []);
});

test('a read of something never written, or deleted, fails the check', () => {
  const writes = [write(K, 3, 1, 2), write(K, 5, 3, 4, true)];
  const checker = new LinearizabilityChecker(writes);
  assert.match(checker.check([get(K, 4, 5, 6)]).join('\n'), /no acknowledged write wrote/);
  assert.match(checker.check([get(K, 5, 5, 6)]).join('\n'), /no acknowledged write wrote/);
  assert.match(checker.check([get(K, 3, 5, 6)]).join('\n'), /misses a write/);
  assert.deepEqual(checker.check([get(K, undefined, 5, 6)]), []);
});

test('a list must show one revision of every key under its prefix', () => {
  const a = '/r/w/a';
  const b = '/r/w/b';
  const writes = [write(a, 3, 1, 2), write(b, 4, 1, 2), write(a, 5, 3, 4), write(b, 6, 3, 4, true)];
  const checker = new LinearizabilityChecker(writes);
  // A torn list: a's old value with b's delete.
  assert.match(checker.check([list('/r/w/', { [a]: 3 }, 5, 6)]).join('\n'), /no single revision|misses/);
  // While both later writes are in flight, a consistent mix is fine (a@3 with b@2:
  // before both; a@5 with b@2: between them), a torn one is not (a@3 without b).
  const concurrent = [write(b, 2, 0, 1), write(a, 3, 1, 2), write(a, 5, 3, 10), write(b, 6, 3, 10, true)];
  assert.deepEqual(
    new LinearizabilityChecker(concurrent).check([list('/r/w/', { [a]: 3, [b]: 2 }, 5, 6)]),
    [],
  );
  assert.deepEqual(
    new LinearizabilityChecker(concurrent).check([list('/r/w/', { [a]: 5, [b]: 2 }, 5, 6)]),
    [],
  );
  assert.match(
    new LinearizabilityChecker(concurrent).check([list('/r/w/', { [a]: 3 }, 5, 6)]).join('\n'),
    /no single revision/,
  );
  // After both: exactly a@5 and no b, and its resourceVersion must be a revision showing that.
  assert.deepEqual(checker.check([list('/r/w/', { [a]: 5 }, 5, 6, 6)]), []);
  assert.match(
    checker.check([list('/r/w/', { [a]: 5 }, 5, 6, 4)]).join('\n'),
    /never in that state at its resourceVersion 4/,
  );
  assert.match(checker.check([list('/r/w/', { '/r/x/c': 1 }, 5, 6)]).join('\n'), /outside \/r\/w\//);
});

test('writes whose revisions contradict real time fail the check', () => {
  const problems = new LinearizabilityChecker([write(K, 7, 1, 2), write('/r/w/other', 5, 3, 4)]).check([]);
  assert.match(problems.join('\n'), /finished before write .* began/);
});
