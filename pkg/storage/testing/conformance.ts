// The storage conformance suite: one set of node:test cases that every backend must
// pass through KVStorage (and that a watch cache implementing Storage can run too).
// A backend's test file calls runStorageConformance with a setup that returns a fresh
// storage, the KV beneath it, and a cleanup.
//
// Cases run one after another (compaction is global to a backend, so they must not
// overlap), each under its own key prefix, so no case depends on another's data.
// The suite assumes nothing else writes to the backend while it runs: a few cases
// compare a list's resourceVersion with the store's current revision.

import { randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type { CaseContext, ConformanceEnv } from './helpers.js';
import { kvCases } from './kv-cases.js';
import { listCases } from './list-cases.js';
import { createCases, deleteCases, getCases, guaranteedUpdateCases } from './store-cases.js';
import { watchCases } from './watch-cases.js';

export type { ConformanceEnv } from './helpers.js';

export function runStorageConformance(name: string, setup: () => Promise<ConformanceEnv>): void {
  describe(name, () => {
    let env: ConformanceEnv | undefined;
    // Unique per run, so a persistent backend (a shared etcd) never mixes runs.
    const run = randomBytes(4).toString('hex');
    let counter = 0;
    const ctx: CaseContext = {
      env: () => {
        if (!env) throw new Error('the storage under test was not set up');
        return env;
      },
      prefix: (label) => `/registry/conformance-${run}/${label}-${++counter}/`,
    };

    before(async () => {
      env = await setup();
    });
    after(async () => {
      await env?.cleanup();
    });

    kvCases(ctx);
    createCases(ctx);
    getCases(ctx);
    deleteCases(ctx);
    guaranteedUpdateCases(ctx);
    listCases(ctx);
    watchCases(ctx);
  });
}
