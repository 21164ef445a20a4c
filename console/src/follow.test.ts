import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiError } from './api.js';
import { follow, sleep, type FollowOptions, type FollowState, type Source } from './follow.js';
import { MalformedWatchEvent, type WatchEvent } from './watch-stream.js';

const ev = (type: string, rv: string): WatchEvent => ({
  type,
  object: { metadata: { name: 'x', resourceVersion: rv } },
});
const expired: WatchEvent = {
  type: 'ERROR',
  object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 2 (9)' },
};

/** One watch attempt: the events it delivers, then how it ends. */
interface Step {
  events?: WatchEvent[];
  /** Rejects with this after the events (a refused watch or a dropped connection). */
  fail?: unknown;
  /** Runs this long on the fake clock before ending. Default 5 s (a healthy watch). */
  lastsMs?: number;
  /** Never ends by itself: waits for its signal (then the test aborts). */
  hang?: boolean;
}

/**
 * Runs follow() against scripted reads and watches on a fake clock, and records what
 * it did: every read, every watch's resourceVersion, every wait, every event and state.
 */
async function run(
  reads: (string | Error)[],
  steps: Step[],
  options: FollowOptions = {},
): Promise<{
  log: string[];
  waits: number[];
  states: FollowState[];
  events: string[];
  signals: AbortSignal[];
}> {
  let clock = 1_000_000;
  const log: string[] = [];
  const waits: number[] = [];
  const states: FollowState[] = [];
  const events: string[] = [];
  const signals: AbortSignal[] = [];
  const stop = new AbortController();
  const source: Source = {
    read: async () => {
      const next = reads.shift();
      if (next === undefined) throw new Error('unexpected read');
      if (next instanceof Error) {
        log.push('read failed');
        throw next;
      }
      log.push(`read ${next}`);
      return next;
    },
    watch: async (rv, onEvent, signal) => {
      log.push(`watch ${rv}`);
      signals.push(signal);
      const step = steps.shift();
      if (!step) {
        stop.abort();
        return;
      }
      for (const e of step.events ?? []) onEvent(e);
      if (step.hang) {
        stop.abort();
        if (!signal.aborted) await new Promise((r) => signal.addEventListener('abort', r));
        throw new DOMException('aborted', 'AbortError');
      }
      clock += step.lastsMs ?? 5_000;
      if (step.fail !== undefined) throw step.fail;
    },
    onEvent: (e) =>
      events.push(
        `${e.type} ${(e.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`,
      ),
    onState: (s) => states.push(s),
  };
  await follow(source, stop.signal, {
    random: () => 0,
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    ...options,
  });
  return { log, waits, states, events, signals };
}

describe('follow', () => {
  it('watches from the first read, hands over changes, and resumes a clean end from the last resourceVersion', async () => {
    const r = await run(
      [],
      [{ events: [ev('MODIFIED', '11'), ev('BOOKMARK', '15')] }, { events: [ev('DELETED', '16')] }],
      { from: '10' },
    );
    assert.deepEqual(r.log, ['watch 10', 'watch 15', 'watch 16']);
    assert.deepEqual(r.events, ['MODIFIED 11', 'DELETED 16'], 'a bookmark is not a change');
    assert.deepEqual(r.waits, []);
  });

  it('reads first when it has no resourceVersion', async () => {
    const r = await run(['4'], [{}]);
    assert.deepEqual(r.log, ['read 4', 'watch 4', 'watch 4']);
  });

  it('reads again at once on 410 Gone, as an ERROR event or as a refused watch', async () => {
    const r = await run(
      ['20', '30'],
      [
        { events: [ev('MODIFIED', '12'), expired, ev('MODIFIED', '13')] },
        { fail: new ApiError(410, { code: 410 }) },
      ],
      { from: '10' },
    );
    assert.deepEqual(r.log, ['watch 10', 'read 20', 'watch 20', 'read 30', 'watch 30']);
    assert.deepEqual(r.events, ['MODIFIED 12'], 'nothing after the ERROR is handed over');
    assert.deepEqual(r.waits, []);
  });

  it('after another ERROR event, waits and reads again', async () => {
    const failed: WatchEvent = { type: 'ERROR', object: { code: 500, message: 'internal error' } };
    const r = await run(['20'], [{ events: [failed] }], { from: '10' });
    assert.deepEqual(r.log, ['watch 10', 'read 20', 'watch 20']);
    assert.deepEqual(r.waits, [800]);
    const retrying = r.states.find((s) => s.phase === 'retrying');
    assert.ok(retrying && retrying.phase === 'retrying' && retrying.error instanceof ApiError);
    assert.equal((retrying.error as ApiError).message, 'internal error');
  });

  it('after a dropped connection, backs off exponentially to 30 s and watches again from the last resourceVersion', async () => {
    const dropped = new TypeError('network error');
    const steps: Step[] = [{ events: [ev('MODIFIED', '11')], fail: dropped }];
    for (let i = 0; i < 7; i++) steps.push({ fail: dropped, lastsMs: 10 });
    const r = await run([], steps, { from: '10' });
    assert.deepEqual(r.waits, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    assert.deepEqual(new Set(r.log.slice(1)), new Set(['watch 11']), 'it read again or lost its place');
    assert.ok(r.states.some((s) => s.phase === 'retrying' && s.error === dropped));
  });

  it('adds up to the delay again as jitter', async () => {
    const r = await run([], [{ fail: new TypeError('x') }, { fail: new TypeError('x') }], {
      from: '1',
      random: () => 0.5,
    });
    assert.deepEqual(r.waits, [1200, 2400]);
  });

  it('starts the backoff over once two minutes passed without a wait', async () => {
    const dropped = new TypeError('network error');
    const r = await run([], [{ fail: dropped }, { fail: dropped }, { fail: dropped, lastsMs: 121_000 }], {
      from: '1',
    });
    assert.deepEqual(r.waits, [800, 1600, 800]);
  });

  it('backs off when watches end at once with nothing', async () => {
    const r = await run([], [{ lastsMs: 10 }, { lastsMs: 10 }], { from: '5' });
    assert.deepEqual(r.log, ['watch 5', 'watch 5', 'watch 5']);
    assert.deepEqual(r.waits, [800, 1600]);
  });

  it('backs off when a read fails, then reads again', async () => {
    const r = await run([new ApiError(503, { message: 'unavailable' }), '7'], [{}]);
    assert.deepEqual(r.log, ['read failed', 'read 7', 'watch 7', 'watch 7']);
    assert.deepEqual(r.waits, [800]);
  });

  it('reads again after a stream it cannot parse', async () => {
    const r = await run(['9'], [{ fail: new MalformedWatchEvent('bad') }], { from: '5' });
    assert.deepEqual(r.log, ['watch 5', 'read 9', 'watch 9']);
    assert.deepEqual(r.waits, [800]);
  });

  it('stops and says why on 401, 403 and 404', async () => {
    for (const code of [401, 403, 404]) {
      const refused = new ApiError(code, { code, message: `refused ${code}` });
      const r = await run([], [{ fail: refused }, {}], { from: '5' });
      assert.deepEqual(r.log, ['watch 5'], `${code}`);
      assert.deepEqual(r.states.at(-1), { phase: 'stopped', error: refused });
    }
  });

  it('ends the watch request when the page is left', async () => {
    const r = await run([], [{ hang: true, events: [ev('ADDED', '6')] }], { from: '5' });
    assert.equal(r.signals.length, 1);
    assert.ok(r.signals[0]?.aborted, "the watch's request was not aborted");
    assert.deepEqual(r.waits, [], 'an aborted watch is not a failure');
  });
});

describe('sleep', () => {
  it('ends at once when its signal aborts', async () => {
    const stop = new AbortController();
    const started = Date.now();
    const slept = sleep(60_000, stop.signal);
    stop.abort();
    await slept;
    assert.ok(Date.now() - started < 30_000);
  });
});
