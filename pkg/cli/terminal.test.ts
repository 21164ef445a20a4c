import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';

import { PromptCancelled, readSecretFromTerminal } from './terminal.js';

/** A terminal double: records raw-mode switches, and what the program wrote. */
class FakeTerminal extends EventEmitter {
  readonly rawModes: boolean[] = [];
  written = '';
  setRawMode(mode: boolean): this {
    this.rawModes.push(mode);
    return this;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
  write(chunk: string): boolean {
    this.written += chunk;
    return true;
  }
  type(text: string): void {
    this.emit('data', Buffer.from(text));
  }
}

test('the secret is read in raw mode, never written back, and the mode is restored', async () => {
  const tty = new FakeTerminal();
  const answer = readSecretFromTerminal(tty, tty, 'Access key: ');
  tty.type('abcx');
  tty.type('\u007fd'); // Backspace removes the x
  tty.type('ef\r');
  assert.equal(await answer, 'abcdef');
  assert.deepEqual(tty.rawModes, [true, false]);
  assert.equal(tty.written, 'Access key: \n', 'only the prompt and a newline: no echo');
  assert.equal(tty.listenerCount('data'), 0);
});

test('Ctrl-C cancels and still restores the terminal', async () => {
  const tty = new FakeTerminal();
  const answer = readSecretFromTerminal(tty, tty, 'Access key: ');
  tty.type('sec\u0003');
  await assert.rejects(answer, PromptCancelled);
  assert.deepEqual(tty.rawModes, [true, false]);
  assert.ok(!tty.written.includes('sec'));
});
