// Overload protection (k8s.io/apiserver server/filters maxinflight.go and
// priority-and-fairness.go): reads share --max-requests-inflight seats, writes
// --max-mutating-requests-inflight; 0 turns a limit off, as upstream. Within each
// limit requests queue per user and are served fairly (pkg/util/flowcontrol), so
// one caller's flood cannot starve the others; a request refused (its queue full,
// or waiting past the wait limit) gets 429 with `Retry-After: 1`.
//
// It runs where upstream's does: after authentication (flows are users) and before
// authorization. Long-running requests (watches) are never limited, and neither are
// `system:masters` (upstream's exempt priority level) and `platform:admins`, who
// must always be able to reach a struggling server to repair it.

import type { ServerResponse } from 'node:http';

import { newTooManyRequests, type ApiError } from '../../apis/meta/errors.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import { ADMINS_GROUP } from '../../authorization/caller.js';
import { MASTERS_GROUP } from '../../authorization/subject-access-review.js';
import type { RequestKind } from '../../metrics/apiserver.js';
import {
  droppedRequests,
  flowcontrolRejectedRequests,
  flowcontrolWaitDuration,
  inqueue,
  reportPriorityLevel,
  type FlowLabels,
} from '../../metrics/flowcontrol.js';
import type { HistogramSeries } from '../../metrics/families.js';
import type { Clock } from '../../util/flowcontrol/clock.js';
import { QueueSet, type Decision, type RejectReason } from '../../util/flowcontrol/queueset.js';
import type { RequestInfo } from '../request-info.js';

/** upstream's tooManyRequests text; the Status carries it with reason TooManyRequests. */
export const TOO_MANY_REQUESTS_MESSAGE = 'Too many requests, please try again later.';

/** upstream's retryAfter constant. */
const RETRY_AFTER_SECONDS = 1;

/** upstream's nonMutatingRequestVerbs. */
const READ_ONLY_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

/** kube-apiserver's LongRunningRequestCheck: these verbs and subresources hold a request open by design. */
const LONG_RUNNING_VERBS: ReadonlySet<string> = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

const EXEMPT_GROUPS: readonly string[] = [MASTERS_GROUP, ADMINS_GROUP];

/**
 * The queueing within one limit: upstream's suggested `global-default` priority
 * level holds 50 requests a queue in 128 queues; here each user's queue holds 50,
 * and all users' together 3,200.
 */
const QUEUE_LENGTH_LIMIT = 50;
const TOTAL_QUEUE_LIMIT = 3200;

/** The flow schema every limited request falls under: one flow per user, as upstream's global-default. */
const FLOW_SCHEMA = 'global-default';

export interface MaxInflightOptions {
  /** --max-requests-inflight: reads at once; 0 = unlimited. */
  readonly maxRequestsInflight: number;
  /** --max-mutating-requests-inflight: writes at once; 0 = unlimited. */
  readonly maxMutatingRequestsInflight: number;
  /** How long a request may wait for a seat (upstream: a quarter of --request-timeout). */
  readonly queueWaitLimitMs: number;
  readonly clock?: Clock;
  /** Told of every refused request before its 429 (the request metrics count it: filters/metrics.ts). */
  readonly onRejected?: (res: ServerResponse, info: RequestInfo) => void;
}

export function isLongRunning(info: RequestInfo): boolean {
  return LONG_RUNNING_VERBS.has(info.verb) || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

export function newTooManyRequestsError(): ApiError {
  return newTooManyRequests(TOO_MANY_REQUESTS_MESSAGE, RETRY_AFTER_SECONDS);
}

/** One limit (reads or writes): its queue set and the metrics it records. */
class PriorityLevel {
  readonly queueSet: QueueSet;

  constructor(kind: RequestKind, limit: number, options: MaxInflightOptions) {
    const labels: FlowLabels = { priority_level: kind, flow_schema: FLOW_SCHEMA };
    // Series resolved once, on first use (a series appears once it has a sample, as
    // before): every admitted request records its wait, and hashing the labels on each
    // observe was most of what the limiter cost a request.
    let executed: HistogramSeries | undefined;
    let notExecuted: HistogramSeries | undefined;
    const rejectedBy = new Map<RejectReason, ReturnType<typeof flowcontrolRejectedRequests.labels>>();
    const dropped = droppedRequests.labels({ request_kind: kind });
    this.queueSet = new QueueSet(
      {
        concurrencyLimit: limit,
        totalQueueLimit: TOTAL_QUEUE_LIMIT,
        queueLengthLimit: QUEUE_LENGTH_LIMIT,
        queueWaitLimitMs: options.queueWaitLimitMs,
      },
      {
        waiting: (n) => inqueue.set(kind, n),
        dispatched: (ms) =>
          (executed ??= flowcontrolWaitDuration.series({ ...labels, execute: 'true' })).observe(ms / 1000),
        rejected: (reason, ms) => {
          let counter = rejectedBy.get(reason);
          if (!counter) rejectedBy.set(reason, (counter = flowcontrolRejectedRequests.labels({ ...labels, reason })));
          counter.inc();
          (notExecuted ??= flowcontrolWaitDuration.series({ ...labels, execute: 'false' })).observe(ms / 1000);
          dropped.inc();
        },
      },
      options.clock,
    );
    reportPriorityLevel(labels, this.queueSet);
  }
}

export class MaxInflightFilter {
  private readonly readOnly: PriorityLevel | undefined;
  private readonly mutating: PriorityLevel | undefined;
  private readonly onRejected: ((res: ServerResponse, info: RequestInfo) => void) | undefined;

  /** Undefined when both limits are 0: nothing to limit, as upstream skips the filter. */
  static create(options: MaxInflightOptions): MaxInflightFilter | undefined {
    if (options.maxRequestsInflight <= 0 && options.maxMutatingRequestsInflight <= 0) return undefined;
    return new MaxInflightFilter(options);
  }

  private constructor(options: MaxInflightOptions) {
    this.onRejected = options.onRejected;
    if (options.maxRequestsInflight > 0)
      this.readOnly = new PriorityLevel('readOnly', options.maxRequestsInflight, options);
    if (options.maxMutatingRequestsInflight > 0)
      this.mutating = new PriorityLevel('mutating', options.maxMutatingRequestsInflight, options);
  }

  /**
   * Resolves once the request holds a seat (released when its response closes), or
   * at once when it is not limited; throws the 429 when it is refused.
   * `signalOf` is the request's signal, asked for only if it has to wait.
   */
  admit(
    res: ServerResponse,
    info: RequestInfo,
    user: AuthenticatedUser,
    signalOf: () => AbortSignal,
  ): void | Promise<void> {
    if (isLongRunning(info)) return;
    const level = READ_ONLY_VERBS.has(info.verb) ? this.readOnly : this.mutating;
    if (!level) return;
    if (isExempt(user)) return;
    const decision = level.queueSet.admit(user.name, signalOf);
    if (decision instanceof Promise) return decision.then((d) => this.seat(res, info, d));
    this.seat(res, info, decision);
  }

  private seat(res: ServerResponse, info: RequestInfo, decision: Decision): void {
    if (!decision.admitted) {
      this.onRejected?.(res, info);
      throw newTooManyRequestsError();
    }
    holdSeat(res, decision.seat);
  }
}

/** Whether the user is in a group the limiter never holds back (a loop: no closure per request). */
function isExempt(user: AuthenticatedUser): boolean {
  for (const g of user.groups) if (EXEMPT_GROUPS.includes(g)) return true;
  return false;
}

function holdSeat(res: ServerResponse, seat: { release(): void }): void {
  // The client may have left while the request waited: the seat goes back at once.
  // `release` is the listener itself (it needs no `this` and runs once at most), so
  // holding a seat costs no wrapper per request.
  if (res.closed) seat.release();
  else res.on('close', seat.release);
}
