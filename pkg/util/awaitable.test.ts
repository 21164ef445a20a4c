import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { FirstDecider } from './awaitable.js';

type Member = { name: string; answer: number | null | Error; later?: boolean };

const calls: string[] = [];
function ask(member: Member): number | null | Promise<number | null> {
  calls.push(member.name);
  if (member.answer instanceof Error) {
    if (member.later) return Promise.reject(member.answer);
    throw member.answer;
  }
  return member.later ? Promise.resolve(member.answer) : member.answer;
}
const isNumber = (r: number | null): boolean => r !== null;

function decider(...members: Member[]): FirstDecider<Member, undefined, number | null> {
  calls.length = 0;
  return new FirstDecider(members, ask, isNumber, -1);
}

describe('FirstDecider', () => {
  it('answers synchronously, without a promise, when every member asked answers at once', () => {
    const d = decider({ name: 'a', answer: null }, { name: 'b', answer: 2 }, { name: 'c', answer: 3 });
    assert.equal(d.decide(undefined), 2);
    assert.deepEqual(calls, ['a', 'b']);
    assert.equal(decider({ name: 'a', answer: null }).decide(undefined), -1, 'the fallback when nobody decides');
    assert.equal(decider().decide(undefined), -1);
  });

  it('continues in order after a member that waits, and the first decider still wins', async () => {
    const d = decider(
      { name: 'a', answer: null },
      { name: 'b', answer: null, later: true },
      { name: 'c', answer: null },
      { name: 'd', answer: 4, later: true },
      { name: 'e', answer: 5 },
    );
    const answer = d.decide(undefined);
    assert.ok(answer instanceof Promise);
    assert.equal(await answer, 4);
    assert.deepEqual(calls, ['a', 'b', 'c', 'd']);
    const none = decider({ name: 'a', answer: null, later: true }, { name: 'b', answer: null });
    assert.equal(await none.decide(undefined), -1);
  });

  it('ends the walk at a member that throws or rejects', async () => {
    assert.throws(
      () => decider({ name: 'a', answer: null }, { name: 'b', answer: new Error('bad') }, { name: 'c', answer: 3 }).decide(undefined),
      /bad/,
    );
    assert.deepEqual(calls, ['a', 'b']);
    const waiting = decider(
      { name: 'a', answer: null, later: true },
      { name: 'b', answer: new Error('late') },
      { name: 'c', answer: 3 },
    );
    await assert.rejects(async () => waiting.decide(undefined), /late/);
    assert.deepEqual(calls, ['a', 'b']);
    const rejected = decider({ name: 'a', answer: new Error('rejected'), later: true }, { name: 'b', answer: 2 });
    await assert.rejects(async () => rejected.decide(undefined), /rejected/);
    assert.deepEqual(calls, ['a']);
  });
});
