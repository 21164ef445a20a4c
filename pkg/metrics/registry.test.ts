import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exposition } from './registry.js';

/** The value of an unlabelled sample in a Prometheus text exposition. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

test('the event-loop lag gauges still see a stall of the loop', async () => {
  await exposition(); // a scrape resets the histogram: measure from here
  // Let the sampler tick at least once, then block the loop for 300 ms.
  await new Promise((resolve) => setTimeout(resolve, 250));
  const until = Date.now() + 300;
  while (Date.now() < until) {
    // busy: no tick of the sampler can run
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
  const { body } = await exposition();
  for (const stat of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99']) {
    assert.notEqual(sample(body, `nodejs_eventloop_lag_${stat}_seconds`), undefined, stat);
  }
  // The tick due during the stall ran at least 300 ms minus one sampling interval late.
  const max = sample(body, 'nodejs_eventloop_lag_max_seconds') ?? 0;
  assert.ok(max >= 0.15, `nodejs_eventloop_lag_max_seconds ${max} after a 300 ms stall`);
});
