// Retries an assertion while a change travels through the server's watches (or a
// short ttl runs out): a bounded poll instead of a sleep, so a test waits only as
// long as the server needs and fails with the last assertion's message. The e2e
// servers are separate processes, so this polls every 100 ms rather than the unit
// tests' 20 ms.

import { eventually as retry } from '../pkg/util/eventually.js';

export function eventually(fn: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  return retry(fn, timeoutMs, 100);
}
