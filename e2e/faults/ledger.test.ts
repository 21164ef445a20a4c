// The fault suite's definitions of a missed, duplicated and out-of-order watch event:
// each would let a broken watch pass if it were wrong, so they are tested on their own.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AckLedger, WatchRecord } from './ledger.js';

function ledgerOf(...creates: Array<[string, bigint]>): AckLedger {
  const ledger = new AckLedger();
  for (const [name, resourceVersion] of creates) ledger.add({ name, resourceVersion, via: 'r' });
  return ledger;
}

test('a create is seen through its ADDED event at its resourceVersion, across a resume', () => {
  const w = new WatchRecord();
  w.list([], 10n);
  w.event('ADDED', 'a', 11n);
  w.resumed();
  w.event('ADDED', 'b', 12n);
  assert.deepEqual(w.missing(ledgerOf(['a', 11n], ['b', 12n])), []);
  assert.deepEqual(w.figures(), { events: 2, resumes: 1, lists: 1, duplicates: 0, outOfOrder: 0 });
  assert.equal(w.lastResourceVersion, 12n);
});

test('a create the watch never delivered is missed, also when an event for it came at another resourceVersion', () => {
  const w = new WatchRecord();
  w.list([], 10n);
  w.event('ADDED', 'a', 11n);
  w.event('ADDED', 'b', 99n);
  assert.deepEqual(
    w.missing(ledgerOf(['a', 11n], ['b', 12n], ['c', 13n])).map((c) => c.name),
    ['b', 'c'],
  );
});

test('a relist after 410 counts what it lists as seen, and the watch goes on from its resourceVersion', () => {
  const w = new WatchRecord();
  w.list([], 10n);
  w.event('ADDED', 'a', 11n);
  w.list(
    [
      { name: 'a', resourceVersion: 11n },
      { name: 'b', resourceVersion: 12n },
    ],
    20n,
  );
  assert.deepEqual(w.missing(ledgerOf(['a', 11n], ['b', 12n])), []);
  assert.equal(w.lastResourceVersion, 20n);
  // An event from before the list's resourceVersion is a replay: out of order.
  w.event('ADDED', 'c', 15n);
  assert.equal(w.figures().outOfOrder, 1);
});

test('an ADDED event delivered twice is a duplicate, and a resourceVersion going back is out of order', () => {
  const w = new WatchRecord();
  w.list([], 10n);
  w.event('ADDED', 'a', 11n);
  w.event('ADDED', 'b', 12n);
  w.resumed();
  w.event('ADDED', 'a', 11n);
  w.bookmark(5n);
  const f = w.figures();
  assert.equal(f.duplicates, 1);
  assert.equal(f.outOfOrder, 2);
  assert.equal(w.lastResourceVersion, 12n, 'resuming goes on from the newest resourceVersion seen');
  assert.equal(w.anomalies.length, 3);
});

test('a bookmark moves the resume point forward without counting as an event', () => {
  const w = new WatchRecord();
  w.list([], 10n);
  w.bookmark(30n);
  assert.equal(w.lastResourceVersion, 30n);
  assert.equal(w.figures().events, 0);
});
