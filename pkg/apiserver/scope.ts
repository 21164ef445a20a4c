// One request on its way through the server: what was asked, by whom, in which
// encoding the answer goes out, and the warnings collected for it. Handlers answer
// through `send` and `fail`, which add the headers every API response carries.

import type { IncomingMessage, ServerResponse } from 'node:http';

import { isApiError, toApiError, type ApiError } from '../apis/meta/errors.js';
import type { AuditRecorder } from '../audit/context.js';
import { nowEpochMs } from '../audit/event.js';
import type { AuthenticatedUser } from '../authentication/user/user.js';
import type { RequestContext } from '../registry/rest/interfaces.js';
import type { StorageDeadline } from '../storage/deadline.js';
import { closeAfterUnreadBody } from './close-unread.js';
import type { AuditEntry } from './filters/audit.js';
import { disarmDeadline, type DeadlineEntry, type DeadlineList } from './filters/deadline-list.js';
import type { Logger } from '../util/log/index.js';
import type { RequestInfo } from './request-info.js';
import { JSON_FORMAT, writeError, writeObject, type OutputFormat } from './responses.js';
import { warningHeaders } from './warnings.js';

export class RequestScope implements DeadlineEntry {
  /** Encoding of the answer, errors included; JSON until negotiation says otherwise. */
  format: OutputFormat = JSON_FORMAT;
  readonly warnings: string[] = [];
  user: AuthenticatedUser | undefined;
  info: RequestInfo | undefined;
  /** The request's audit ID (the Audit-ID response header; see filters/audit.ts). */
  auditID = '';
  /** When the request arrived, in epoch ms with microseconds (the audit events' requestReceivedTimestamp). */
  readonly receivedEpochMs = nowEpochMs();
  /** Set when the audit policy audits this request: handlers record the request and response objects into it. */
  audit: AuditRecorder | undefined;
  /** The audit filter's bookkeeping for this request until its last event is stored (filters/audit.ts). */
  auditEntry: AuditEntry | undefined;
  /** The deadline the request's storage calls work under (filters/timeout.ts); none for a watch. */
  storageDeadline: StorageDeadline | undefined;
  private queryParams: URLSearchParams | undefined;
  private abortController: AbortController | undefined;
  /** The request's deadline (filters/timeout.ts), set for its storage calls or not; none for a watch. */
  requestDeadline: StorageDeadline | undefined;
  // The request's place among the armed deadlines (filters/deadline-list.ts): links
  // in the scope itself rather than a timer and a closure per request.
  expiresAt = Infinity;
  armedIn: DeadlineList | undefined;
  prevArmed: DeadlineEntry | undefined;
  nextArmed: DeadlineEntry | undefined;
  private closed = false;
  /** The Status the request was answered with when its deadline passed; later answers are dropped. */
  private expired: ApiError | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The URL path as sent, prefix included, query excluded. */
    readonly rawPath: string,
    /** The query as sent, without the `?`. */
    readonly rawQuery: string,
    private readonly logger: Logger,
  ) {}

  /** Parsed on first use: most requests never look at their query. */
  get query(): URLSearchParams {
    if (!this.queryParams) this.queryParams = new URLSearchParams(this.rawQuery);
    return this.queryParams;
  }

  get hasQuery(): boolean {
    return this.rawQuery !== '';
  }

  /** Aborted when the client goes away, or the request's deadline passes. */
  get signal(): AbortSignal {
    if (!this.abortController) {
      this.abortController = new AbortController();
      if (this.expired) this.abortController.abort(this.expired);
      else if (this.closed && !this.res.writableFinished) this.abortController.abort();
    }
    return this.abortController.signal;
  }

  /**
   * The deadline passed before the answer started (filters/timeout.ts checks that):
   * the client gets `err`, the request's signal aborts, and any later send or fail is
   * dropped.
   */
  timeOut(err: ApiError): void {
    this.fail(err);
    this.expired = err;
    this.abortController?.abort(err);
  }

  /** True once the deadline passed and the client got the timeout. */
  get timedOut(): boolean {
    return this.expired !== undefined;
  }

  /** True once the request was answered without its work (timed out, or its client left): StorageDeadline asks. */
  get abandoned(): boolean {
    return this.expired !== undefined || this.closed;
  }

  /** The response is over (finished or cut off). */
  markClosed(): void {
    if (this.armedIn) disarmDeadline(this);
    this.closed = true;
    // Only a response cut short means the client went away; aborting also costs a DOMException.
    if (!this.res.writableFinished) this.abortController?.abort();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  context(namespace: string): RequestContext {
    const user = this.user;
    if (!user) throw new Error('request context without an authenticated user');
    return new ScopeContext(this, user, namespace);
  }

  /** Sets one Warning header per collected warning; a no-op once headers are out. */
  applyWarnings(): void {
    if (this.warnings.length === 0 || this.res.headersSent) return;
    this.res.setHeader('Warning', warningHeaders(this.warnings));
  }

  send(code: number, obj: unknown, format: OutputFormat = this.format): void {
    // The client already has its 504: the late answer of abandoned work goes nowhere.
    if (this.expired) return;
    this.applyWarnings();
    this.audit?.logResponseObject(code, obj);
    writeObject(this.res, code, obj, format);
  }

  fail(err: unknown): ApiError {
    if (this.expired) return this.expired;
    this.applyWarnings();
    // A body refused for its size was not read to the end: this connection cannot carry another request.
    if (isApiError(err) && err.code === 413 && !this.res.headersSent) {
      this.res.setHeader('Connection', 'close');
      closeAfterUnreadBody(this.req);
    }
    if (this.audit) {
      // Before the write: the audit's last event is stored as the response ends.
      const status = toApiError(err);
      this.audit.logResponseObject(status.code, status.toStatus());
    }
    return writeError(this.res, err, this.format, this.logger, this.logFields());
  }

  /** What the request log and error log say about this request (never headers or bodies). */
  logFields(): Record<string, unknown> {
    const info = this.info;
    const fields: Record<string, unknown> = { method: this.req.method, path: this.rawPath };
    if (this.auditID !== '') fields.auditID = this.auditID;
    if (info) {
      fields.verb = info.verb;
      if (info.isResourceRequest) {
        fields.resource = info.resource;
        if (info.subresource) fields.subresource = info.subresource;
        if (info.namespace) fields.namespace = info.namespace;
        if (info.name) fields.name = info.name;
      }
    }
    if (this.user) fields.user = this.user.name;
    // As upstream's httplog notes "<caller> is impersonating <user>".
    if (this.user?.impersonator) fields.impersonatedBy = this.user.impersonator.name;
    return fields;
  }
}

/**
 * The registry's view of a request. A class, so that every context shares one hidden
 * class and its `signal` getter lives on the prototype: an object literal with a getter
 * was a dictionary-mode object with a fresh getter closure, ~0.6 KB a request. The
 * signal is still created only if the registry looks (most requests never need one).
 * A copy made with spread carries only own fields, so one that must keep the signal
 * names it (`{ ...ctx, namespace, signal: ctx.signal }`).
 */
class ScopeContext implements RequestContext {
  readonly userAgent: string | undefined;
  readonly warnings: string[];
  readonly deadline: StorageDeadline | undefined;

  /** A private field: not an own key, so no spread copy takes it along. */
  readonly #scope: RequestScope;

  constructor(
    scope: RequestScope,
    readonly user: AuthenticatedUser,
    readonly namespace: string,
  ) {
    this.#scope = scope;
    this.userAgent = scope.req.headers['user-agent'];
    this.warnings = scope.warnings;
    this.deadline = scope.storageDeadline;
  }

  get signal(): AbortSignal {
    return this.#scope.signal;
  }
}
