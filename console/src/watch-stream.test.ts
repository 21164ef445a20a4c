import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  MalformedWatchEvent,
  WatchLineDecoder,
  readWatchStream,
  resourceVersionOf,
  type WatchEvent,
} from './watch-stream.js';

const line = (type: string, rv: string) =>
  `${JSON.stringify({ type, object: { kind: 'Team', metadata: { name: 't', resourceVersion: rv } } })}\n`;

/** A response body that delivers `chunks` (bytes) one read at a time. */
function body(chunks: Uint8Array<ArrayBuffer>[]): ReadableStream<Uint8Array<ArrayBuffer>> {
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

describe('WatchLineDecoder', () => {
  it('gives each complete line as an event, in order', () => {
    const d = new WatchLineDecoder();
    const events = d.push(line('ADDED', '5') + line('MODIFIED', '6'));
    assert.deepEqual(
      events.map((e) => [e.type, resourceVersionOf(e.object)]),
      [
        ['ADDED', '5'],
        ['MODIFIED', '6'],
      ],
    );
  });

  it('holds a line cut anywhere until its end arrives', () => {
    const text = line('MODIFIED', '7') + line('DELETED', '8');
    for (let cut = 1; cut < text.length; cut++) {
      const d = new WatchLineDecoder();
      const events = [...d.push(text.slice(0, cut)), ...d.push(text.slice(cut)), ...d.end()];
      assert.deepEqual(
        events.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
        `cut at ${cut}`,
      );
    }
  });

  it('skips blank lines and keeps a last line without its newline', () => {
    const d = new WatchLineDecoder();
    assert.deepEqual(d.push('\n  \r\n'), []);
    assert.deepEqual(d.push(line('BOOKMARK', '9').trimEnd()), []);
    assert.deepEqual(
      d.end().map((e) => e.type),
      ['BOOKMARK'],
    );
  });

  it('refuses a line that is not a watch event', () => {
    for (const bad of ['{"type":"ADDED"', '"ADDED"', '{"object":{}}', '{"type":"ADDED","object":null}']) {
      assert.throws(() => new WatchLineDecoder().push(`${bad}\n`), MalformedWatchEvent, bad);
    }
  });

  it('reads an ERROR event with its Status', () => {
    const status = {
      kind: 'Status',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 1 (5)',
    };
    const [event] = new WatchLineDecoder().push(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    assert.equal(event?.type, 'ERROR');
    assert.deepEqual(event?.object, status);
  });
});

describe('readWatchStream', () => {
  it('decodes a stream cut inside a line and inside a UTF-8 character', async () => {
    const bytes = new TextEncoder().encode(
      `${JSON.stringify({ type: 'MODIFIED', object: { metadata: { resourceVersion: '3' }, spec: { displayName: 'Équipe ✓' } } })}\n`,
    );
    // Cut inside the two-byte É and the three-byte ✓.
    const at = [bytes.indexOf(0xc3) + 1, bytes.indexOf(0xe2) + 2];
    const chunks = [bytes.slice(0, at[0]), bytes.slice(at[0], at[1]), bytes.slice(at[1])];
    const events: WatchEvent[] = [];
    await readWatchStream(body(chunks), (e) => events.push(e));
    assert.equal(events.length, 1);
    assert.deepEqual((events[0]?.object as { spec: unknown }).spec, { displayName: 'Équipe ✓' });
  });

  it('rejects on a malformed line and cancels the stream', async () => {
    let cancelled: () => void = () => undefined;
    const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
    const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('not json\n'));
      },
      cancel() {
        cancelled();
      },
    });
    await assert.rejects(
      readWatchStream(stream, () => undefined),
      MalformedWatchEvent,
    );
    // Left open, the test would time out here.
    await wasCancelled;
  });
});
