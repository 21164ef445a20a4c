// How many watches a started server has open, by resource, from its own metrics
// (apiserver_longrunning_requests{verb="WATCH"}): what tells a test that a page's watch
// was closed on the server, or that no second one was left open.

import assert from 'node:assert/strict';

import { eventually } from './eventually.js';
import type { TestServer } from './harness.js';

/** Watches of `resource` the server has open now. */
export async function openWatches(server: TestServer, resource: string): Promise<number> {
  const res = await server.api('GET', '/metrics');
  assert.equal(res.status, 200, res.text);
  let open = 0;
  for (const line of res.text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    if (line.includes(`resource="${resource}"`) && line.includes('verb="WATCH"'))
      open += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return open;
}

/** Waits (up to `withinMs`, generous: it times nothing) until `count` watches of `resource` are open. */
export async function expectOpenWatches(
  server: TestServer,
  resource: string,
  count: number,
  withinMs: number,
): Promise<void> {
  await eventually(
    async () => assert.equal(await openWatches(server, resource), count, `open ${resource} watches`),
    withinMs,
  );
}
