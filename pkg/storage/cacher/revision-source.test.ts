import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RevisionSource } from './revision-source.js';

test('concurrent callers share revision reads, but never one that started before they asked', async () => {
  let revision = 10;
  const started: number[] = [];
  const pending: (() => void)[] = [];
  const source = new RevisionSource(() => {
    // Each read answers with the revision as of when it started.
    const answer = revision;
    started.push(answer);
    return new Promise<number>((resolve) => pending.push(() => resolve(answer)));
  });
  const first = source.current();
  revision = 11; // a write acknowledged after the first read started
  const second = source.current();
  const third = source.current();
  assert.equal(started.length, 1, 'the later callers wait for the next read');
  pending.shift()?.();
  assert.equal(await first, 10);
  await new Promise((r) => setImmediate(r));
  assert.equal(started.length, 2, 'one read for both waiting callers');
  pending.shift()?.();
  assert.equal(await second, 11);
  assert.equal(await third, 11);
  const fourth = source.current();
  assert.equal(started.length, 3, 'an idle source reads at once');
  pending.shift()?.();
  assert.equal(await fourth, 11);
});
