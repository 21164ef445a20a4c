import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Counter, Histogram, Registry } from 'prom-client';

import { CounterFamily, HistogramFamily } from './families.js';
import { LATENCY_BUCKETS } from './registry.js';
import { sample } from './testing.js';

describe('hot-path metric families', () => {
  it('expose a histogram cumulatively, with +Inf, sum and count, per series', async () => {
    const registry = new Registry();
    const h = new HistogramFamily({
      name: 'x_seconds',
      help: 'h',
      labelNames: ['verb'],
      buckets: [1, 0.1],
      registry,
    });
    const get = h.series({ verb: 'GET' });
    get.observe(0.05);
    get.observe(0.5);
    get.observe(7);
    h.series({ verb: 'PUT' }).observe(0.1);
    const text = await registry.metrics();
    assert.match(text, /# TYPE x_seconds histogram/);
    assert.equal(sample(text, 'x_seconds_bucket', { verb: 'GET', le: '0.1' }), 1);
    assert.equal(sample(text, 'x_seconds_bucket', { verb: 'GET', le: '1' }), 2);
    assert.equal(sample(text, 'x_seconds_bucket', { verb: 'GET', le: '+Inf' }), 3);
    assert.equal(sample(text, 'x_seconds_sum', { verb: 'GET' }), 7.55);
    assert.equal(sample(text, 'x_seconds_count', { verb: 'GET' }), 3);
    // An observation on a bound falls in that bucket (le is "less than or equal").
    assert.equal(sample(text, 'x_seconds_bucket', { verb: 'PUT', le: '0.1' }), 1);
  });

  it('give one series per label set, whatever object the labels come in', async () => {
    const registry = new Registry();
    const c = new CounterFamily({ name: 'x_total', help: 'c', labelNames: ['code', 'verb'], registry });
    c.series({ verb: 'GET', code: '200' }).inc();
    c.series({ code: '200', verb: 'GET' }).inc(2);
    c.series({ verb: 'GET', code: '404' }).inc();
    const text = await registry.metrics();
    assert.match(text, /# TYPE x_total counter/);
    assert.equal(sample(text, 'x_total', { verb: 'GET', code: '200' }), 3);
    assert.equal(sample(text, 'x_total', { verb: 'GET', code: '404' }), 1);
  });

  it('expose byte for byte what prom-client exposes for the same calls', async () => {
    // The storage and audit metrics moved from prom-client to these families: a
    // scrape must not tell (names, HELP/TYPE, label order, buckets, values).
    const labelNames = ['operation', 'group', 'resource'];
    const theirs = new Registry();
    const ours = new Registry();
    const histogram = new Histogram({
      name: 'd_seconds',
      help: 'Latency.',
      labelNames,
      buckets: [...LATENCY_BUCKETS],
      registers: [theirs],
    });
    const counter = new Counter({ name: 'd_total', help: 'Count.', labelNames, registers: [theirs] });
    new Counter({ name: 'e_total', help: 'Failures.', labelNames, registers: [theirs] });
    const hf = new HistogramFamily({
      name: 'd_seconds',
      help: 'Latency.',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registry: ours,
    });
    const cf = new CounterFamily({ name: 'd_total', help: 'Count.', labelNames, registry: ours });
    new CounterFamily({ name: 'e_total', help: 'Failures.', labelNames, registry: ours });
    const calls: [Record<string, string>, number][] = [
      [{ operation: 'get', group: 'management.platform.dev', resource: 'users' }, 0.0004],
      [{ operation: 'create', group: 'management.platform.dev', resource: 'teams' }, 0.25],
      [{ operation: 'get', group: 'management.platform.dev', resource: 'users' }, 0.005],
      [{ operation: 'getCurrentResourceVersion', group: '', resource: '' }, 120],
      [{ operation: 'get', group: 'management.platform.dev', resource: 'users' }, 1],
    ];
    for (const [labels, seconds] of calls) {
      histogram.observe(labels, seconds);
      counter.inc(labels);
      hf.series(labels).observe(seconds);
      cf.series(labels).inc();
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
  });
});
