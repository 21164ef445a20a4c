// The garbage collector's work: its queues under client-go's workqueue metric names
// (component-base's workqueue provider: workqueue_depth, workqueue_adds_total,
// workqueue_retries_total, labelled by queue name as kube-controller-manager names
// the collector's queues), and the platform's own counts of what it did.

import { Counter, Gauge } from 'prom-client';

import { registry } from './registry.js';

/** A queue's depth, read at scrape time (adding is the hot path; scraping is not). */
const queues = new Map<string, { readonly length: number }>();

/** Reports `queue`'s depth under `name`; a newer queue of the same name replaces an older one. */
export function reportWorkQueue(name: string, queue: { readonly length: number }): void {
  queues.set(name, queue);
}

new Gauge({
  name: 'workqueue_depth',
  help: 'Current depth of workqueue',
  labelNames: ['name'],
  registers: [registry],
  collect() {
    for (const [name, queue] of queues) this.set({ name }, queue.length);
  },
});

export const workqueueAdds = new Counter({
  name: 'workqueue_adds_total',
  help: 'Total number of adds handled by workqueue',
  labelNames: ['name'],
  registers: [registry],
});

export const workqueueRetries = new Counter({
  name: 'workqueue_retries_total',
  help: 'Total number of retries handled by workqueue',
  labelNames: ['name'],
  registers: [registry],
});

export const garbageCollectorAttempts = new Counter({
  name: 'platform_garbage_collector_attempts_total',
  help: 'Items the garbage collector worked on, by queue and result (an error is retried after a backoff).',
  labelNames: ['queue', 'result'],
  registers: [registry],
});

export const garbageCollectorDeletedObjects = new Counter({
  name: 'platform_garbage_collector_deleted_objects_total',
  help: 'Objects the garbage collector deleted because their owners are gone, by the propagation policy it deleted them with.',
  labelNames: ['propagation_policy'],
  registers: [registry],
});

export const garbageCollectorOrphanedDependents = new Counter({
  name: 'platform_garbage_collector_orphaned_dependents_total',
  help: 'Dependents whose owner reference the garbage collector removed, orphaning them, as their deleted owner asked.',
  registers: [registry],
});
