// A ballast of plain live objects in a child process (authz-scale-cause.ts): to tell
// whether a server's get costs more because its heap is larger (more for the collector
// to walk) or because of what that heap holds. Items are JSON.parse output shaped like
// a stored object (metadata, labels, managedFields, a spec of strings), so the ballast
// is many small objects and strings, as a cache of stored objects is, not a few
// large buffers.

import { memory } from './memory.js';

const kept: unknown[] = [];

function item(i: number): unknown {
  const name = `ballast-${i}`;
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'management.platform.dev/v1',
      kind: 'OwnedAccessKey',
      metadata: {
        name,
        uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        resourceVersion: String(1000 + i),
        creationTimestamp: '2026-11-26T06:00:00Z',
        managedFields: [
          {
            manager: 'bench',
            operation: 'Update',
            apiVersion: 'management.platform.dev/v1',
            time: '2026-11-26T06:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { '.': {}, 'f:displayName': {}, 'f:description': {}, 'f:user': {}, 'f:key': {} } },
          },
        ],
      },
      spec: {
        displayName: name,
        description: 'A benchmark access key.',
        user: `member-${i % 1000}`,
        key: `sha256:${String(i).padStart(64, '0')}`,
      },
    }),
  );
}

/** Adds items until the live heap (after a full collection) has grown by `bytes`; returns what was added. */
export function addBallast(bytes: number): { items: number; heapUsed: number } {
  const start = memory().heapUsed;
  let heapUsed = start;
  let items = 0;
  let batch = 2000;
  while (heapUsed - start < bytes) {
    for (let j = 0; j < batch; j++) kept.push(item(kept.length));
    items += batch;
    heapUsed = memory().heapUsed;
    // Most of the rest in one step (a full collection per batch is what costs here).
    const perItem = Math.max(1, (heapUsed - start) / items);
    batch = Math.max(500, Math.floor((0.9 * (bytes - (heapUsed - start))) / perItem));
  }
  return { items, heapUsed };
}
