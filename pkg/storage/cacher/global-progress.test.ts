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

describe('the write-order watch feeding the caches', () => {
  const U = '/registry/g/users/';
  const prefixOf = (key: string): string | undefined =>
    key.startsWith(P) ? P : key.startsWith(U) ? U : undefined;

  /** A feed's handlers that record what they are handed. */
  function recorder(): { handlers: KVWatchHandlers; events: number[]; progress: number[]; errors: Error[] } {
    const events: number[] = [];
    const progress: number[] = [];
    const errors: Error[] = [];
    return {
      events,
      progress,
      errors,
      handlers: {
        withoutPrevious: true,
        onEvents: (es) => events.push(...es.map((e) => e.kv.modRevision)),
        onProgress: (rev) => progress.push(rev),
        onError: (err) => errors.push(err),
      },
    };
  }

  it('is used only where the KV cannot order progress requests, asked of it once', () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, prefixOf);
    assert.equal(gp.sharesWatch(), true, 'the scripted watches have no requestProgress');
    assert.equal(gp.sharesWatch(), true);
    assert.equal(watches.length, 1, 'one probe watch');
    assert.equal(watches[0]?.cancelled, true, 'the probe is cancelled at once');

    const ordered = {
      watch: () => ({ cancel: () => undefined, requestProgress: () => undefined }),
    } as unknown as KV;
    assert.equal(new GlobalProgress(ordered, prefixOf).sharesWatch(), false);
    gp.stop();
  });

  it("hands each feed its prefix's events once, from its start, before proving the cache current", () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, prefixOf);
    const teams = recorder();
    let provenWhenTold = false;
    gp.feed(P, 11, {
      ...teams.handlers,
      onEvents: (es) => {
        teams.handlers.onEvents(es);
        const last = es[es.length - 1]!.kv.modRevision;
        provenWhenTold = gp.proves(P, last, last, last);
      },
    });
    gp.attach(() => undefined, 10);
    assert.deepEqual(
      live(watches).map((w) => w.from),
      [11],
      'one watch of the keyspace, from the feed',
    );
    const w = live(watches)[0]!;
    w.handlers.onEvents([put(`${P}a`, 11)]);
    w.handlers.onEvents([put(`${U}x`, 12)]);
    w.handlers.onEvents([put(`${P}b`, 13), put(`${P}c`, 13)]);
    assert.deepEqual(teams.events, [11, 13, 13], "only the teams prefix's events, each once");
    assert.equal(provenWhenTold, true, 'the fed cache is current at the event it was handed');
    assert.equal(gp.proves(P, 13, 13, 13), true);
    w.handlers.onProgress?.(20);
    assert.deepEqual(teams.progress, [20]);
    assert.equal(gp.proves(P, 20, 13, 20), true, 'a quiet prefix is current at the progress revision');
    gp.stop();
    assert.equal(teams.errors.length, 1, 'stop ends the feeds');
  });

  it('restarts from a feed that starts behind it, keeping its proof and handing nothing twice', () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, prefixOf);
    const teams = recorder();
    gp.feed(P, 11, teams.handlers);
    const first = live(watches)[0]!;
    first.handlers.onEvents([put(`${P}a`, 11)]);
    first.handlers.onEvents([put(`${U}x`, 12)]);
    first.handlers.onEvents([put(`${U}y`, 13)]);
    // The users cache listed at 11; the watch has passed 12 and 13 already.
    const users = recorder();
    gp.feed(U, 12, users.handlers);
    assert.deepEqual(
      live(watches).map((w) => w.from),
      [12],
      'the watch is restarted from where the new feed starts',
    );
    assert.equal(first.cancelled, true);
    assert.equal(gp.revision, 13, 'what was seen stays seen');
    assert.equal(gp.proves(U, 11, 0, 13), false, 'the users cache has not applied 12 and 13 yet');
    const again = live(watches)[0]!;
    again.handlers.onEvents([put(`${U}x`, 12)]); // replayed
    again.handlers.onEvents([put(`${U}y`, 13)]); // replayed
    again.handlers.onEvents([put(`${P}b`, 14)]);
    assert.deepEqual(users.events, [12, 13]);
    assert.deepEqual(teams.events, [11, 14], 'the teams feed is handed nothing twice');
    assert.equal(gp.proves(U, 14, 13, 14), true);
    // A late event of the replaced watch changes nothing.
    first.handlers.onEvents([put(`${U}z`, 12)]);
    assert.deepEqual(users.events, [12, 13]);
    gp.stop();
  });

  it('keeps its feeds across a broken stream, and ends them when history is lost', async () => {
    const { kv, watches, revisionAsked } = scriptedKV();
    const gp = new GlobalProgress(kv, prefixOf);
    const teams = recorder();
    gp.feed(P, 11, teams.handlers);
    live(watches)[0]!.handlers.onEvents([put(`${P}a`, 11)]);
    fail(live(watches)[0], new Error('connection reset'));
    // A cache that lists while the watch is down feeds from where it listed.
    const users = recorder();
    gp.feed(U, 10, users.handlers);
    await until('the watch to resume', () => live(watches).length === 1);
    assert.equal(live(watches)[0]?.from, 10, 'resumed early enough for the new feed');
    live(watches)[0]!.handlers.onEvents([put(`${P}a`, 11)]);
    live(watches)[0]!.handlers.onEvents([put(`${U}b`, 12)]);
    assert.deepEqual(teams.events, [11], 'the teams feed went on without an error or a repeat');
    assert.deepEqual(users.events, [12]);
    assert.deepEqual([teams.errors.length, users.errors.length], [0, 0]);

    fail(live(watches)[0], new CompactedError(13, 20));
    assert.ok(teams.errors[0] instanceof CompactedError, 'a lost history ends the feed: its cache relists');
    assert.ok(users.errors[0] instanceof CompactedError);
    const answer = await revisionAsked();
    answer(30);
    await until('the restart', () => live(watches).length === 1);
    assert.equal(live(watches)[0]?.from, 31);
    gp.stop();
  });

  it('ends a feed whose handler throws, and only that one', () => {
    const { kv, watches } = scriptedKV();
    const gp = new GlobalProgress(kv, prefixOf);
    const teams = recorder();
    const users = recorder();
    gp.feed(P, 11, {
      ...teams.handlers,
      onEvents: () => {
        throw new Error('cache failed');
      },
    });
    gp.feed(U, 11, users.handlers);
    live(watches)[0]!.handlers.onEvents([put(`${P}a`, 11), put(`${U}b`, 11)]);
    live(watches)[0]!.handlers.onEvents([put(`${P}a`, 12), put(`${U}b`, 12)]);
    assert.deepEqual(
      teams.errors.map((e) => e.message),
      ['cache failed'],
    );
    assert.deepEqual(users.events, [11, 12]);
    gp.stop();
  });
});
