// A small audit event for the backends' tests.

import { newEvent } from './event.js';
import type { Event } from './types.js';

/** A Metadata event of a `get`, with `auditID` as given. */
export function testEvent(auditID: string): Event {
  return newEvent({
    level: 'Metadata',
    auditID,
    requestURI: '/',
    verb: 'get',
    user: { username: 'u' },
    sourceIPs: [],
    userAgent: '',
    objectRef: undefined,
    requestReceivedEpochMs: Date.now(),
  });
}
