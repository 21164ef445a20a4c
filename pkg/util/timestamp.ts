// Timestamps as Kubernetes writes them (RFC 3339 in UTC, whole seconds), formatted
// once per second: every create stamps creationTimestamp and a managedFields time,
// and toISOString with a regex per write was ~0.5% of a create's CPU.

/** The last second formatted, shared by every caller (the text depends on the second alone). */
let lastSecond = { epochSeconds: NaN, text: '' };

/** `d` as RFC 3339 in UTC to the whole second, e.g. "2026-11-26T06:53:22Z". */
export function rfc3339Seconds(d: Date): string {
  const epochSeconds = Math.floor(d.getTime() / 1000);
  if (epochSeconds !== lastSecond.epochSeconds) {
    lastSecond = { epochSeconds, text: d.toISOString().replace(/\.\d+Z$/, 'Z') };
  }
  return lastSecond.text;
}
