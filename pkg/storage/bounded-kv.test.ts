import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { interpretStorageError } from '../registry/generic/errors.js';
import { BoundedKV } from './bounded-kv.js';
import { isStorageError } from './errors.js';
import { CompactedError, type KV } from './kv.js';

/** A backend whose every call behaves as `answer` says. */
function backend(answer: () => Promise<never>): KV {
  const call = (): Promise<never> => answer();
  return {
    get: call,
    range: call,
    create: call,
    update: call,
    delete: call,
    watch: () => ({ cancel: () => undefined }),
    currentRevision: call,
    compactedRevision: call,
    compact: call,
    close: () => Promise.resolve(),
  };
}

const frozen = backend(() => new Promise<never>(() => undefined));
const TEAMS = { group: 'management.platform.dev', resource: 'teams' };

describe('BoundedKV', () => {
  it('fails a call that storage does not answer in time, and says a write may have succeeded', async () => {
    const kv = new BoundedKV(frozen, 50);
    const started = Date.now();
    const read = await kv.get('/registry/g/teams/a').catch((e: unknown) => e);
    assert.ok(Date.now() - started < 2000);
    assert.ok(isStorageError(read, 'Timeout'));
    assert.doesNotMatch((read as Error).message, /may have succeeded/);
    const write = await kv.create('/registry/g/teams/a', Buffer.from('{}')).catch((e: unknown) => e);
    assert.ok(isStorageError(write, 'Timeout'));
    assert.match((write as Error).message, /the operation may have succeeded/);
  });

  it('turns a backend failure into Unavailable and lets the KV contract errors through', async () => {
    const down = new BoundedKV(
      backend(() => Promise.reject(new Error('14 UNAVAILABLE: connect ECONNREFUSED'))),
    );
    const err = await down.range('/a', '/b').catch((e: unknown) => e);
    assert.ok(isStorageError(err, 'Unavailable'));
    // The cause stays for the log; the message a client sees does not carry it.
    assert.doesNotMatch((err as Error).message, /ECONNREFUSED/);
    const compacted = new BoundedKV(backend(() => Promise.reject(new CompactedError(1, 5))));
    assert.ok((await compacted.get('/a', 1).catch((e: unknown) => e)) instanceof CompactedError);
  });
});

/** The Status a storage failure becomes: always with Retry-After. */
function failureStatus(code: number, reason: string, message: string): unknown {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: { retryAfterSeconds: 1 },
    code,
  };
}

describe('storage failures as clients see them', () => {
  it('are 503 ServiceUnavailable with Retry-After, naming storage', async () => {
    const err = await new BoundedKV(backend(() => Promise.reject(new Error('down'))))
      .get('/a')
      .catch((e: unknown) => e);
    const status = (interpretStorageError(err, TEAMS, 'x', 'get') as { toStatus(): unknown }).toStatus();
    assert.deepEqual(
      status,
      failureStatus(
        503,
        'ServiceUnavailable',
        'storage is unavailable: the get operation against teams.management.platform.dev could not be completed, please try again',
      ),
    );
  });

  it('are 504 Timeout for a deadline, saying when a write may have succeeded', async () => {
    const err = await new BoundedKV(frozen, 20).update('/a', Buffer.from('{}'), 3).catch((e: unknown) => e);
    const status = (interpretStorageError(err, TEAMS, 'x', 'update') as { toStatus(): unknown }).toStatus();
    assert.deepEqual(
      status,
      failureStatus(
        504,
        'Timeout',
        'Timeout: storage did not answer the update operation against teams.management.platform.dev in time: the operation may have succeeded',
      ),
    );
  });
});
