// Closing a connection whose request body was not read to the end (a 413 answered
// from Content-Length, or once the limit was passed). Closing at once makes the
// kernel answer the client's remaining bytes with a reset, and a client still
// sending then sees "EPIPE"/"ECONNRESET" instead of the 413 it was sent. Go's
// net/http, which kube-apiserver runs on, avoids that the same way: it half-closes
// the connection and keeps reading for a short while (rstAvoidanceDelay, 500 ms)
// before it closes it.

import type { IncomingMessage } from 'node:http';

/** How long the rest of an unread body is read and discarded after the answer. */
export const LINGER_MS = 500;

/**
 * Call before answering with `Connection: close`: the rest of the body is read and
 * discarded, and once Node ends the connection after the answer, it is destroyed
 * LINGER_MS later instead of at once.
 */
export function closeAfterUnreadBody(req: IncomingMessage, lingerMs = LINGER_MS): void {
  req.resume();
  const socket = req.socket;
  // Node ends a `Connection: close` response's socket with destroySoon(); end() is the
  // half-close (our answer, then FIN), and reading goes on until the timer.
  socket.destroySoon = function lingeringDestroySoon(this: typeof socket): void {
    if (this.writable) this.end();
    setTimeout(() => this.destroy(), lingerMs).unref();
  };
}
