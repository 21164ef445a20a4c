// The request deadline (k8s.io/apiserver endpoints/filters/request_deadline.go and
// the handlers' finisher): a request that is not long-running gets
// --request-timeout, or less when it asks with ?timeout= (a Go duration; more than
// the server's, zero or negative means the server's). When the deadline passes
// before the answer has started, the client gets upstream's 504 Timeout Status at
// once, the request's signal aborts so the work in progress may stop, and whatever
// the handler answers later is dropped. Storage writes are single transactions, so
// the abandoned write either committed or did not: never half an object.
//
// The deadline also bounds the request's storage calls (storage/deadline.ts): each
// gets what is left of it, at most the per-call bound; a request answered 504 starts
// no further call; and when a write's transaction was out at the deadline, the 504
// says the operation may have succeeded, since it may have.

import { newBadRequest, newTimeout, type ApiError } from '../../apis/meta/errors.js';
import { StorageDeadline } from '../../storage/deadline.js';
import { parseDuration } from '../../util/duration.js';
import type { RequestScope } from '../scope.js';
import { RequestDeadlines, type DeadlineClock } from './deadline-list.js';

/** upstream's invalidTimeoutInURL. */
const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';

/**
 * What the finisher answers when the deadline passes (context.DeadlineExceeded's
 * text), saying so when a write had been sent to storage and not answered.
 */
export function newRequestTimeout(writeOutstanding = false): ApiError {
  const outcome = writeOutstanding ? ': the operation may have succeeded' : '';
  return newTimeout(`request did not complete within requested timeout - context deadline exceeded${outcome}`, 0);
}

/**
 * The deadline the request asked for with ?timeout=, in ms: undefined when it did
 * not ask (or asked for zero or less); a 400 when the value is no duration.
 */
export function requestedTimeoutMs(query: URLSearchParams | undefined): number | undefined {
  const raw = query?.get('timeout');
  if (raw === null || raw === undefined || raw === '') return undefined;
  const negative = raw.startsWith('-');
  const ms = parseDuration(negative ? raw.slice(1) : raw);
  // Go's own error text for the value, as upstream appends it.
  if (ms === undefined)
    throw newBadRequest(`${INVALID_TIMEOUT} - time: invalid duration ${JSON.stringify(raw)}`);
  return negative || ms <= 0 ? undefined : ms;
}

export class RequestTimeoutFilter {
  /** Every armed request's deadline, under one timer (./deadline-list.ts). */
  private readonly deadlines: RequestDeadlines<RequestScope>;

  constructor(
    /** --request-timeout in ms. */
    private readonly maximumMs: number,
    /**
     * Told of each request the deadline cut off, as its 504 goes out (the metrics
     * count it in apiserver_request_terminations_total, as upstream's timeout filter
     * calls RecordRequestTermination). Not called when the answer had begun.
     */
    private readonly onTimeout?: (scope: RequestScope) => void,
    /** Tests pass a fake clock. */
    clock?: DeadlineClock,
  ) {
    this.deadlines = new RequestDeadlines(maximumMs, this.expire, clock);
  }

  /**
   * Arms the deadline of a request that is not long-running (a bad ?timeout= is a 400
   * before any work) and returns it for the request's storage calls. The request
   * disarms it when its response closes (RequestScope.markClosed).
   */
  arm(scope: RequestScope): StorageDeadline {
    const asked = requestedTimeoutMs(scope.hasQuery ? scope.query : undefined);
    const ms = asked === undefined || asked > this.maximumMs ? this.maximumMs : asked;
    const deadline = new StorageDeadline(Date.now() + ms, scope);
    scope.requestDeadline = deadline;
    // A client gone while authentication or authorization was awaited: nothing to time
    // out, and a closed scope linked in would hold its request until the deadline.
    if (!scope.isClosed) this.deadlines.arm(scope, ms);
    return deadline;
  }

  /** A request's deadline passed: its 504, unless the answer has started by then. */
  private readonly expire = (scope: RequestScope): void => {
    if (scope.isClosed || scope.res.headersSent) return;
    this.onTimeout?.(scope);
    scope.timeOut(newRequestTimeout((scope.requestDeadline?.writesInFlight ?? 0) > 0));
  };
}
