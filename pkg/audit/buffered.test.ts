import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AuditBackend } from './backend.js';
import { BufferedBackend, type BatchConfig } from './buffered.js';
import type { Event } from './types.js';

function event(id: number): Event {
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: String(id),
    stage: 'ResponseComplete',
    requestURI: '/',
    verb: 'get',
    user: {},
    requestReceivedTimestamp: '',
    stageTimestamp: '',
  };
}

/** A delegate that holds every batch until released. */
class HeldBackend implements AuditBackend {
  readonly batches: Event[][] = [];
  private release: (() => void) | undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  async processEvents(events: readonly Event[]): Promise<boolean> {
    this.batches.push([...events]);
    await this.gate;
    return true;
  }

  open(): void {
    this.release?.();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const config: BatchConfig = {
  bufferSize: 5,
  maxBatchSize: 2,
  maxBatchWaitMs: 60_000,
  throttleEnable: false,
  throttleQPS: 0,
  throttleBurst: 0,
  asyncDelegate: false,
};

describe('batch mode', () => {
  it('never makes a request wait, and drops and counts what a full buffer cannot take', async () => {
    const delegate = new HeldBackend();
    const dropped: string[] = [];
    const backend = new BufferedBackend(delegate, config, (plugin, _err, events) => {
      assert.equal(plugin, 'buffered');
      dropped.push(...events.map((e) => e.auditID));
    });
    // The delegate never answers: every call still resolves true at once.
    for (let i = 0; i < 12; i++) assert.equal(await backend.processEvents([event(i)]), true);
    // One batch of two is with the delegate; five wait; the rest were dropped.
    assert.equal(delegate.batches.length, 1);
    assert.deepEqual(
      delegate.batches[0]?.map((e) => e.auditID),
      ['0', '1'],
    );
    assert.deepEqual(dropped, ['7', '8', '9', '10', '11']);
    delegate.open();
    await backend.shutdown();
    assert.deepEqual(
      delegate.batches.flat().map((e) => e.auditID),
      ['0', '1', '2', '3', '4', '5', '6'],
    );
  });

  it('sends a batch that is not full once shut down (no event is lost on a clean stop)', async () => {
    const delegate = new HeldBackend();
    delegate.open();
    const backend = new BufferedBackend(delegate, config, () => assert.fail('nothing is dropped'));
    await backend.processEvents([event(1)]);
    assert.equal(delegate.batches.length, 0, 'a lone event waits for its batch');
    await backend.shutdown();
    assert.deepEqual(delegate.batches, [[event(1)]]);
  });
});
