import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { StorageWatchEvent, WatchReceiver, Watcher } from '../../storage/interfaces.js';
import { decorateWatcher } from './decorated-watcher.js';

const added = (name: string): StorageWatchEvent => ({ type: 'ADDED', object: { metadata: { name } } });

/** Marks each event's object as decorated; throws for the name `bad`. */
function decorate(e: StorageWatchEvent): StorageWatchEvent {
  if (e.object.metadata.name === 'bad') throw new Error('cannot decorate');
  return { type: e.type, object: { ...e.object, kind: 'Decorated' } };
}

/** A watcher that pushes to its receiver when told to, and records stops and resumes. */
class PushingInner implements Watcher {
  receiver: WatchReceiver | undefined;
  stops = 0;
  resumes = 0;

  receive(receiver: WatchReceiver): () => void {
    this.receiver = receiver;
    return () => this.resumes++;
  }

  stop(): void {
    this.stops++;
    this.receiver?.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    throw new Error('a pushed watcher is not iterated');
  }
}

class Recorder implements WatchReceiver {
  readonly events: StorageWatchEvent[] = [];
  readonly ends: unknown[] = [];
  accept = true;

  event(e: StorageWatchEvent): boolean {
    this.events.push(e);
    return this.accept;
  }

  end(err?: unknown): void {
    this.ends.push(err);
  }
}

describe('the registry watcher', () => {
  it('hands pushed events on decorated, and passes holding, resuming, the end and stop through', () => {
    const inner = new PushingInner();
    const watcher = decorateWatcher(inner, decorate);
    const recorder = new Recorder();
    const resume = watcher.receive?.(recorder);
    assert.equal(inner.receiver?.event(added('a')), true);
    recorder.accept = false;
    assert.equal(inner.receiver?.event(added('b')), false, 'the receiver holding reaches the inner watcher');
    resume?.();
    assert.equal(inner.resumes, 1);
    assert.deepEqual(
      recorder.events.map((e) => [e.object.metadata.name, e.object.kind]),
      [
        ['a', 'Decorated'],
        ['b', 'Decorated'],
      ],
    );
    watcher.stop();
    assert.equal(inner.stops, 1);
    assert.deepEqual(recorder.ends, [undefined]);
  });

  it('ends a pushed watch with the decoration error first, then stops the inner watcher', () => {
    const inner = new PushingInner();
    const recorder = new Recorder();
    decorateWatcher(inner, decorate).receive?.(recorder);
    assert.equal(inner.receiver?.event(added('bad')), false);
    assert.equal(inner.stops, 1);
    assert.equal(recorder.events.length, 0);
    assert.equal((recorder.ends[0] as Error).message, 'cannot decorate');
  });

  it('iterates an inner watcher that cannot push, decorated, and stops it when the consumer returns', async () => {
    let stops = 0;
    const events = [added('a'), added('b')];
    const inner: Watcher = {
      stop: () => void stops++,
      [Symbol.asyncIterator]: () => ({
        next: () =>
          Promise.resolve(
            events.length > 0
              ? { done: false, value: events.shift() as StorageWatchEvent }
              : { done: true, value: undefined },
          ),
      }),
    };
    const watcher = decorateWatcher(inner, decorate);
    assert.equal(watcher.receive, undefined, 'no push delivery where the inner watcher has none');
    const seen: string[] = [];
    for await (const e of watcher) {
      seen.push(`${e.object.metadata.name ?? ''}:${e.object.kind ?? ''}`);
      if (seen.length === 1) continue;
      break;
    }
    assert.deepEqual(seen, ['a:Decorated', 'b:Decorated']);
    assert.equal(stops, 1);
  });

  it('ends an iterated watch with the decoration error, and stops the inner watcher', async () => {
    let stops = 0;
    const inner: Watcher = {
      stop: () => void stops++,
      [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: false, value: added('bad') }) }),
    };
    const it = decorateWatcher(inner, decorate)[Symbol.asyncIterator]();
    await assert.rejects(it.next(), /cannot decorate/);
    assert.equal(stops, 1);
  });
});
