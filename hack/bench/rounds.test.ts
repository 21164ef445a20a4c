import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { LoadResult } from './load.js';
import { Row } from './report.js';
import { median, roundOrder, roundRatios, sideOverRounds } from './rounds.js';
import { AUTHZ_ROUNDS } from './suite.js';

function result(throughput: number, cpuUsPerOp: number): LoadResult {
  return {
    operations: throughput,
    throughput,
    latency: { p50Ms: 1, p99Ms: 2 } as LoadResult['latency'],
    errors: 0,
    extra: { cpuUsPerOp },
  };
}

test('every order of three sides, every side in every position alike over six rounds', () => {
  const orders = Array.from({ length: 6 }, (_, r) => roundOrder(3, r).join(''));
  assert.equal(new Set(orders).size, 6, `not all six orders: ${orders.join(', ')}`);
  for (const side of [0, 1, 2]) {
    for (const position of [0, 1, 2]) {
      assert.equal(
        orders.filter((o) => o[position] === String(side)).length,
        2,
        `side ${side} at ${position}`,
      );
    }
  }
  // Of two sides, each goes first as often as the other.
  for (const [a, b] of [
    ['0', '1'],
    ['0', '2'],
    ['1', '2'],
  ] as const) {
    assert.equal(orders.filter((o) => o.indexOf(a) < o.indexOf(b)).length, 3, `${a} before ${b}`);
  }
});

test('two sides alternate who goes first: AB, BA, BA, AB', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((r) => roundOrder(2, r)),
    [
      [0, 1],
      [1, 0],
      [1, 0],
      [0, 1],
    ],
  );
});

test('median of odd and even counts', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
  // A round that gave no figure is left out wherever it falls, not sorted arbitrarily.
  assert.equal(median([1.0, NaN, 0.9, 1.1, 0.8]), 0.95);
  assert.equal(median([NaN, 1.0, 0.9, 1.1, 0.8]), 0.95);
  assert.ok(Number.isNaN(median([NaN, NaN])));
});

test('a row measured in rounds takes its ratio and verdict from the median round ratio', () => {
  // Round ratios 0.5, 1.0, 1.0, 1.0, 2.0: the ratio of the sides' median throughputs
  // (100 / 100) and the median ratio agree here; the best-of figures (400 / 200) would not.
  const seeded = [50, 100, 100, 400, 200].map((t) => result(t, 300));
  const unseeded = [100, 100, 100, 400, 100].map((t) => result(t, 200));
  const rounds = roundRatios(seeded, unseeded);
  assert.deepEqual(rounds.ratios, [0.5, 1, 1, 1, 2]);
  assert.equal(rounds.ratio, 1);
  assert.equal(rounds.cpuRatio, 1.5);
  const row = new Row('authz-scale', 'gets', { value: 1, unit: 'gets/s' })
    .against({ value: 2, unit: 'gets/s' }, 'baseline')
    .byRounds(rounds)
    .target('>=', 0.95);
  assert.equal(row.ratio, 1, 'the median ratio, not server/baseline (0.5)');
  assert.equal(row.verdict, 'met');
  const json = row.toJSON();
  assert.equal(json['ratio'], 1);
  assert.deepEqual((json['rounds'] as { ratios: number[] }).ratios, [0.5, 1, 1, 1, 2]);
  assert.match(row.line(), /median of 5 rounds \(0\.50-2\.00x\), CPU\/op 1\.50x/);

  const slower = roundRatios(
    [90, 91, 92].map((t) => result(t, 110)),
    [100, 100, 100].map((t) => result(t, 100)),
  );
  const missed = new Row('authz-scale', 'gets', { value: 1, unit: 'gets/s' })
    .against({ value: 1, unit: 'gets/s' }, 'baseline')
    .byRounds(slower)
    .target('>=', 0.95);
  assert.equal(missed.verdict, 'missed', 'equal figures, but every round at 0.9-0.92x');
});

test('a side over its rounds: median throughput and CPU, every round kept', () => {
  const side = sideOverRounds([result(300, 90), result(100, 300), result(200, 100)]);
  assert.equal(side.throughput, 200);
  assert.equal(side.extra?.['cpuUsPerOp'], 100);
  assert.deepEqual(side.extra?.['rounds'], [
    { throughput: 300, cpuUsPerOp: 90 },
    { throughput: 100, cpuUsPerOp: 300 },
    { throughput: 200, cpuUsPerOp: 100 },
  ]);
  assert.throws(() => roundRatios([result(1, 1)], []), /1 rounds against 0/);
});

test('a row measured in rounds of which none gave a ratio is missed, not without a target', () => {
  const none = roundRatios([result(100, 100)], [result(0, 0)]);
  const row = new Row('authz-scale', 'gets', { value: 100, unit: 'gets/s' })
    .against({ value: 0, unit: 'gets/s' }, 'baseline')
    .byRounds(none)
    .target('>=', 0.95);
  assert.equal(row.ratio, undefined);
  assert.equal(row.verdict, 'missed');
});

test('the default rounds balance the three sides', () => {
  const firsts = [0, 0, 0];
  for (let round = 0; round < AUTHZ_ROUNDS; round++) {
    const first = roundOrder(3, round)[0] as number;
    firsts[first] = (firsts[first] ?? 0) + 1;
  }
  assert.deepEqual(firsts, [AUTHZ_ROUNDS / 3, AUTHZ_ROUNDS / 3, AUTHZ_ROUNDS / 3]);
});
