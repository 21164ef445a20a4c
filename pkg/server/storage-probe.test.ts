import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StorageProbe } from './storage-probe.js';

/** A storage whose answers the test releases; counts the reads it was asked for. */
function controlledStorage(): {
  asked: () => number;
  answer: () => void;
  storage: { currentResourceVersion(): Promise<number> };
} {
  let asked = 0;
  let release: (() => void) | undefined;
  return {
    asked: () => asked,
    answer: () => release?.(),
    storage: {
      currentResourceVersion: () => {
        asked++;
        return new Promise<number>((resolve) => (release = () => resolve(7)));
      },
    },
  };
}

test('a frozen storage is not ready within a second, and probes are not piled on', async () => {
  const s = controlledStorage();
  const probe = new StorageProbe(s.storage);
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    await assert.rejects(probe.check(), /storage did not answer within 900ms/);
    assert.ok(Date.now() - started < 1500, 'answered within the probe budget');
  }
  assert.equal(s.asked(), 1, 'one probe under way, reused by every check');
  // Storage answers again: the next check is ready, and for a second no new read is made.
  s.answer();
  await probe.check();
  await probe.check();
  assert.equal(s.asked(), 1);
});

test('a failing storage is not ready, and the next check asks again', async () => {
  let asked = 0;
  const probe = new StorageProbe({
    currentResourceVersion: () => {
      asked++;
      return Promise.reject(new Error('storage is unavailable'));
    },
  });
  await assert.rejects(probe.check(), /storage is unavailable/);
  await assert.rejects(probe.check(), /storage is unavailable/);
  assert.equal(asked, 2);
});
