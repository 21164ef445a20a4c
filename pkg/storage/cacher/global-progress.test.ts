// The write-order watch that proves caches current on etcd without ordered progress
// requests, driven through a scripted KV so its restarts can be timed exactly.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompactedError, type KV, type KVEvent, type KVWatch, type KVWatchHandlers } from '../kv.js';
import { GlobalProgress } from './global-progress.js';

const P = '/registry/g/teams/';

interface ScriptedWatch {
  readonly from: number;
  readonly handlers: KVWatchHandlers;
  cancelled: boolean;
}

function put(key: string, revision: number): KVEvent {
  return {
    type: 'put',
    kv: { key, value: Buffer.from('x'), createRevision: revision, modRevision: revision },
  };
}

/** A KV whose watches are recorded and whose currentRevision answers when the test says. */
function scriptedKV(): {
  kv: KV;
  watches: ScriptedWatch[];
  revisionAsked: () => Promise<(revision: number) => void>;
} {
  const watches: ScriptedWatch[] = [];
  const askers: ((answer: (revision: number) => void) => void)[] = [];
  const pending: ((revision: number) => void)[] = [];
  const kv = {
    watch(_prefix: string, from: number, handlers: KVWatchHandlers): KVWatch {
      const w: ScriptedWatch = { from, handlers, cancelled: false };
      watches.push(w);
      return { cancel: () => (w.cancelled = true) };
    },
    currentRevision: () =>
      new Promise<number>((resolve) => {
        const asker = askers.shift();
        if (asker) asker(resolve);
        else pending.push(resolve);
      }),
  } as unknown as KV;
  const revisionAsked = (): Promise<(revision: number) => void> =>
    new Promise((resolve) => {
      const answer = pending.shift();
      if (answer) resolve(answer);
      else askers.push(resolve);
    });
  return { kv, watches, revisionAsked };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const live = (watches: ScriptedWatch[]): ScriptedWatch[] => watches.filter((w) => !w.cancelled);

/** Storage ends the watch with an error (it is over: no cancel needed). */
function fail(w: ScriptedWatch | undefined, err: Error): void {
  assert.ok(w);
  w.cancelled = true;
  w.handlers.onError(err);
}

describe('the write-order watch', () => {
  it('proves a cache current only when it has applied the last write to its prefix', () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, (key) => (key.startsWith(P) ? P : undefined));
    gp.attach(() => undefined, 10);
    watches[0]?.handlers.onEvents([put(`${P}a`, 12), put('/registry/g/users/x', 14)]);
    assert.equal(gp.proves(P, 13, 12, 14), true, 'the write at 14 was not to this prefix');
    assert.equal(gp.proves(P, 11, 11, 14), false, 'the write at 12 has not been applied');
    assert.equal(gp.proves(P, 14, 12, 15), false, 'nothing is known of revision 15 yet');
    gp.stop();
  });

  it('after losing its history restarts as one watch, even when a cache attaches meanwhile', async () => {
    const { kv, watches, revisionAsked } = scriptedKV();
    const gp = new GlobalProgress(kv, (key) => (key.startsWith(P) ? P : undefined));
    gp.attach(() => undefined, 10);
    fail(watches[0], new CompactedError(11, 15));
    const answer = await revisionAsked(); // the restart reads the current revision...
    gp.attach(() => undefined, 20); // ...while a relisted cache attaches
    answer(30);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      live(watches).map((w) => w.from),
      [21],
      'exactly one write-order watch runs, from the attached cache',
    );
    // A late event of a replaced watch must not lower the prefix's last write.
    live(watches)[0]?.handlers.onEvents([put(`${P}a`, 35)]);
    watches[0]?.handlers.onEvents([put(`${P}b`, 22)]);
    assert.equal(gp.proves(P, 35, 22, 35), false, 'a cache that has not applied 35 is not current at 35');
    gp.stop();
  });

  it('after a dropped connection resumes where it stopped and keeps its proof for quiet resources', async () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, (key) => (key.startsWith(P) ? P : undefined));
    gp.attach(() => undefined, 10);
    watches[0]?.handlers.onEvents([put(`${P}a`, 12), put('/registry/g/users/x', 20)]);
    fail(watches[0], new Error('connection reset'));
    assert.equal(gp.proves(P, 12, 12, 20), false, 'nothing is proven while no watch runs');
    await until('the watch to resume', () => live(watches).length === 1);
    const resumed = live(watches)[0];
    assert.equal(resumed?.from, 21);
    resumed?.handlers.onProgress?.(25);
    assert.equal(gp.proves(P, 12, 12, 25), true, 'the teams cache (last write 12) is current at 25');
    gp.stop();
    assert.equal(live(watches).length, 0, 'stop cancels the watch');
  });
});
