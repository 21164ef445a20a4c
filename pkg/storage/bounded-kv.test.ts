import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { interpretStorageError } from '../registry/generic/errors.js';
import { BoundedKV } from './bounded-kv.js';
import { StorageDeadline } from './deadline.js';
import { isStorageError } from './errors.js';
import { CompactedError, type KV } from './kv.js';

/** A backend whose every call behaves as `answer` says (given the call's arguments). */
function backend(answer: (args: unknown[]) => Promise<never>): KV {
  const call = (...args: unknown[]): Promise<never> => answer(args);
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

describe('BoundedKV under a request deadline', () => {
  /** A frozen backend that records the deadline each call was handed. */
  function recordingFrozen(): { kv: KV; seen: (number | undefined)[] } {
    const seen: (number | undefined)[] = [];
    const kv = backend((args) => {
      // The deadline BoundedKV hands down is the call's last argument.
      const last = args[args.length - 1];
      seen.push(last instanceof StorageDeadline ? last.deadlineAt : undefined);
      return new Promise<never>(() => undefined);
    });
    return { kv, seen };
  }

  /** Settles with the call's outcome, or 'hung' if the call outlives `ms` (generous). */
  async function outcome(p: Promise<unknown>, ms = 20_000): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
    try {
      return await Promise.race([p.catch((e: unknown) => e), hung]);
    } finally {
      clearTimeout(timer);
    }
  }

  it("ends a call at the request's deadline, not the per-call bound, and hands the backend that deadline", async () => {
    const { kv, seen } = recordingFrozen();
    // A per-call bound of a minute: only the request's deadline can end this call in time.
    const bounded = new BoundedKV(kv, 60_000);
    const request = new StorageDeadline(Date.now() + 100);
    const err = await outcome(bounded.get('/registry/g/teams/a', undefined, request));
    assert.ok(isStorageError(err, 'Timeout'), String(err));
    assert.equal(seen.length, 1);
    assert.ok((seen[0] ?? Infinity) <= request.deadlineAt, 'the backend call ends no later than the request');
  });

  it('hands the backend the per-call bound when that ends first', async () => {
    const { kv, seen } = recordingFrozen();
    const request = new StorageDeadline(Date.now() + 3_600_000);
    await outcome(new BoundedKV(kv, 50).get('/a', undefined, request));
    assert.ok((seen[0] ?? Infinity) < request.deadlineAt - 3_000_000);
  });

  it('sends nothing for a request already answered without its work (timed out or client gone)', async () => {
    const { kv, seen } = recordingFrozen();
    const request = new StorageDeadline(Date.now() + 60_000, () => true);
    const err = await outcome(new BoundedKV(kv).create('/a', Buffer.from('{}'), request));
    assert.ok(isStorageError(err, 'Timeout'));
    // The transaction never left: its outcome is known.
    assert.doesNotMatch((err as Error).message, /may have succeeded/);
    assert.equal(seen.length, 0);
  });

  it('counts a write as outstanding from when it is sent until storage answers it', async () => {
    let answer: (() => void) | undefined;
    const kv = backend(() => new Promise<never>((_, reject) => (answer = () => reject(new Error('down')))));
    const request = new StorageDeadline(Date.now() + 60_000);
    const write = new BoundedKV(kv).update('/a', Buffer.from('{}'), 1, request);
    assert.equal(request.writesInFlight, 1);
    answer?.();
    await write.catch(() => undefined);
    assert.equal(request.writesInFlight, 0);
    // Timed out and still unanswered: it stays outstanding (it may yet be applied).
    const frozenRequest = new StorageDeadline(Date.now() + 50);
    await outcome(new BoundedKV(frozen).create('/b', Buffer.from('{}'), frozenRequest));
    assert.equal(frozenRequest.writesInFlight, 1);
  });

  it('bounds a call made for no request by the per-call bound alone', async () => {
    const { kv, seen } = recordingFrozen();
    const before = Date.now();
    const err = await outcome(new BoundedKV(kv, 50).currentRevision());
    assert.ok(isStorageError(err, 'Timeout'), String(err));
    const handed = seen[0];
    assert.ok(handed !== undefined, 'the backend is handed a deadline');
    assert.ok(handed >= before + 50 && handed <= Date.now() + 50, 'the per-call bound');
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
