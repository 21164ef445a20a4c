// The wire form of a watch: one JSON event per line (`{"type":"MODIFIED","object":{...}}`),
// streamed in chunks that may cut a line, or a UTF-8 character, anywhere. Knows nothing
// of the page or of fetch, so that its parsing is tested on its own.

import type { Status } from './api.js';

/** One watch event as the server writes it (watch.k8s.io WatchEvent, JSON). */
export interface WatchEvent {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  readonly type: string;
  /** The object (for ERROR: a Status). */
  readonly object: unknown;
}

/** A line that is not a watch event: the stream cannot be trusted past it, so the watch starts over. */
export class MalformedWatchEvent extends Error {}

/** Splits streamed text into watch events; holds a cut line until the rest of it arrives. */
export class WatchLineDecoder {
  private buffered = '';

  /** The events completed by `text`. */
  push(text: string): WatchEvent[] {
    this.buffered += text;
    const events: WatchEvent[] = [];
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      const event = parseLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  /** The stream ended: a last line without its newline is still an event. */
  end(): WatchEvent[] {
    const rest = this.buffered;
    this.buffered = '';
    const event = parseLine(rest);
    return event ? [event] : [];
  }
}

function parseLine(line: string): WatchEvent | undefined {
  const text = line.trim();
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MalformedWatchEvent('the server sent a watch event that is not JSON');
  }
  if (!parsed || typeof parsed !== 'object')
    throw new MalformedWatchEvent('the server sent a watch event that is not an object');
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (typeof type !== 'string' || !object || typeof object !== 'object')
    throw new MalformedWatchEvent('the server sent a watch event without a type or an object');
  return { type, object };
}

/** Reads a watch response's body to its end, calling `onEvent` for each event in order. */
export async function readWatchStream(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  onEvent: (event: WatchEvent) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const decoder = new WatchLineDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of decoder.push(value)) onEvent(event);
    }
    for (const event of decoder.end()) onEvent(event);
  } finally {
    // A throwing handler or a malformed line must not leave the response open.
    reader.cancel().catch(() => undefined);
  }
}

/** The resourceVersion an event's object carries, if any (BOOKMARKs carry only that). */
export function resourceVersionOf(object: unknown): string | undefined {
  const meta = (object as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata;
  return typeof meta?.resourceVersion === 'string' && meta.resourceVersion ? meta.resourceVersion : undefined;
}

/** An ERROR event's Status (code 410 for an expired resourceVersion). */
export function errorStatusOf(event: WatchEvent): Status {
  return event.object as Status;
}
