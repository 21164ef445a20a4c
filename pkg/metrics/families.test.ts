import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Registry } from 'prom-client';

import { CounterFamily, HistogramFamily } from './families.js';
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
});
