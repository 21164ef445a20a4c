// Audit, where upstream's DefaultBuildHandlerChain puts it:
//
// - WithAuditInit (endpoints/filters/with_auditid.go): every response carries an
//   `Audit-ID` header, audit on or off. A client's (or the aggregator's) own
//   `Audit-ID` is kept, so one ID follows a request through the hops; otherwise a
//   new UUID. The request log line carries the same ID.
// - WithAudit (endpoints/filters/audit.go), after authentication: the policy decides
//   the level from the request's attributes; an audited request gets its
//   RequestReceived event before any work, ResponseStarted when a watch's headers go
//   out, and ResponseComplete (or Panic, for an unexpected error) once the response
//   is over. In blocking-strict mode a RequestReceived that cannot be stored fails
//   the request with a 500.
// - WithFailedAuthenticationAudit (authn_audit.go): a 401 is audited as one
//   ResponseStarted event with an empty user and what credentials were tried.
// - WithAuthorization's annotations: authorization.k8s.io/decision and /reason.

import type { IncomingMessage, ServerResponse } from 'node:http';

import { newInternalError } from '../../apis/meta/errors.js';
import { RequestAudit } from '../../audit/context.js';
import { attributesFor } from '../filters.js';
import { newEvent, sourceIPs, userAgentOf } from '../../audit/event.js';
import type { AuditConfig } from '../../audit/options.js';
import { AUDIT_ID_HEADER, type EventUser, type ObjectReference } from '../../audit/types.js';
import type { AuthenticatedUser } from '../../authentication/user/user.js';
import { auditRequestsRejectedTotal, countAuditLevel } from '../../metrics/audit.js';
import { accessKeyExtraKey } from '../../registry/authentication/selfsubjectreview/storage.js';
import type { RequestInfo } from '../request-info.js';
import type { RequestScope } from '../scope.js';
import { randomUUID } from '../../util/uuid.js';

/** Nothing was written (the client went away first): upstream's faked status, copied per event. */
const CLOSED_EARLY = { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 } as const;

/** Longest incoming Audit-ID kept (upstream keeps any; a bound keeps log lines sane). */
const MAX_AUDIT_ID_LENGTH = 256;

/** The identity of requests served before authentication (probes, /version, the token issuer's documents). */
export const ANONYMOUS_USER: Pick<AuthenticatedUser, 'name' | 'groups'> = {
  name: 'system:anonymous',
  groups: ['system:unauthenticated'],
};

/** What an event records of the caller. */
type AuditedUser = Pick<AuthenticatedUser, 'name' | 'groups' | 'uid' | 'extra' | 'accessKeyName'>;

/** WithAuditInit: the request's audit ID, echoed in the response's Audit-ID header. */
export function initAuditID(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['audit-id'];
  const candidate = Array.isArray(given) ? given[0] : given;
  // Node already refused control characters in headers; empty or oversized gets a fresh one.
  const auditID =
    candidate !== undefined && candidate.trim() !== '' && candidate.length <= MAX_AUDIT_ID_LENGTH
      ? candidate
      : randomUUID();
  res.setHeader(AUDIT_ID_HEADER, auditID);
  return auditID;
}

/** getAuthMethods: what the failed request tried, never the credential itself. */
function attemptedAuthMethods(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = (req.headers.authorization ?? '').trim();
  if (/^basic\s/i.test(auth)) methods.push('basic');
  const parts = auth.split(' ');
  if (parts.length > 1 && parts[0]?.toLowerCase() === 'bearer') methods.push('bearer');
  const socket = req.socket as { getPeerCertificate?: () => { raw?: Buffer } };
  if (typeof socket.getPeerCertificate === 'function' && socket.getPeerCertificate()?.raw)
    methods.push('x509');
  return methods.length > 0
    ? `Authentication failed, attempted: ${methods.join(', ')}`
    : 'Authentication failed, no credentials provided';
}

/**
 * The user as an event records it: the access key's name joins `extra`, as `kubectl
 * auth whoami` shows it. Built in upstream's order with the extra's keys sorted, so the
 * event encodes without an ordered copy (pkg/audit/encode.ts).
 */
function eventUser(user: AuditedUser, accessKeyExtra: string): EventUser {
  const out: EventUser = { username: user.name };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length > 0) out.groups = [...user.groups];
  const given = user.extra;
  if (!given) {
    // The common case, an access key's caller: one key, nothing to sort.
    if (user.accessKeyName) out.extra = { [accessKeyExtra]: [user.accessKeyName] };
    return out;
  }
  const values = new Map<string, string[]>();
  for (const key of Object.keys(given)) values.set(key, [...(given[key] ?? [])]);
  if (user.accessKeyName) values.set(accessKeyExtra, [user.accessKeyName]);
  if (values.size === 0) return out;
  const extra: Record<string, string[]> = {};
  for (const key of [...values.keys()].sort()) {
    // An own property even for `__proto__`, never the prototype.
    Object.defineProperty(extra, key, { value: values.get(key), enumerable: true, writable: true, configurable: true });
  }
  out.extra = extra;
  return out;
}

/** What the URL says of the object; empty fields left out (undefined), as the event writes them. */
function objectRefOf(info: RequestInfo): ObjectReference | undefined {
  if (!info.isResourceRequest) return undefined;
  return {
    resource: info.resource || undefined,
    namespace: info.namespace || undefined,
    name: info.name || undefined,
    uid: undefined,
    apiGroup: info.apiGroup || undefined,
    apiVersion: info.apiVersion || undefined,
    resourceVersion: undefined,
    subresource: info.subresource || undefined,
  };
}

/** An audited request's audit until its last event is stored (RequestScope.auditEntry). */
export interface AuditEntry {
  readonly audit: RequestAudit;
  readonly failedAuthentication: boolean;
  /** Set when the request ended in an error that is no API error (this server's panic). */
  panicked?: string;
}

export class AuditFilter {
  /** The extra key an access key's name is recorded under (`<group>/access-key`), built once. */
  private readonly accessKeyExtra: string;

  constructor(
    private readonly config: AuditConfig,
    /** The management API group, which names the access-key extra. */
    group: string,
  ) {
    this.accessKeyExtra = accessKeyExtraKey(group);
  }

  private start(
    scope: RequestScope,
    info: RequestInfo,
    user: AuditedUser | undefined,
  ): RequestAudit | undefined {
    const decided = this.config.policy.evaluate(attributesFor(user, info));
    countAuditLevel(decided.level);
    if (decided.level === 'None') return undefined;
    const event = newEvent({
      level: decided.level,
      auditID: scope.auditID,
      requestURI: scope.req.url ?? '/',
      verb: info.verb,
      user: user ? eventUser(user, this.accessKeyExtra) : undefined,
      sourceIPs: sourceIPs(scope.req),
      userAgent: userAgentOf(scope.req),
      objectRef: objectRefOf(info),
      requestReceivedEpochMs: scope.receivedEpochMs,
    });
    return new RequestAudit(event, decided, this.config.backend);
  }

  /**
   * WithAudit, once the caller is known: RequestReceived before any work. Throws the
   * 500 of blocking-strict when that event cannot be stored.
   */
  begin(scope: RequestScope, info: RequestInfo, user: AuditedUser): void | Promise<void> {
    const audit = this.start(scope, info, user);
    if (!audit) return;
    scope.audit = audit;
    this.track(scope, { audit, failedAuthentication: false });
    if (info.verb === 'watch') this.reportResponseStart(scope.res, audit);
    // Synchronous when the policy omits the stage (the chart's default does).
    const stored = audit.process('RequestReceived');
    if (stored === true) return;
    return stored.then((ok) => {
      if (ok) return;
      // As upstream: the request fails at once, and no later stage is audited.
      scope.auditEntry = undefined;
      auditRequestsRejectedTotal.inc();
      throw newInternalError('failed to store audit event');
    });
  }

  /** WithFailedAuthenticationAudit: remembered now, stored when the 401 goes out. */
  failedAuthentication(scope: RequestScope, info: RequestInfo): void {
    const audit = this.start(scope, info, undefined);
    if (!audit) return;
    audit.event.responseStatus = { metadata: {}, message: attemptedAuthMethods(scope.req), code: 401 };
    this.track(scope, { audit, failedAuthentication: true });
  }

  /**
   * The last event is stored before the response ends, as upstream's deferred event
   * is stored before its handler returns: in blocking mode a client that has its
   * answer knows the event is written. A response that never ends (the client went
   * away) gets it from finish(). The entry rides on the request's scope (no map keyed
   * by the response, whose weak entries each collection must trace), and the end
   * goes out on one `then` of the event's write (no async frame, no `finally`).
   */
  private track(scope: RequestScope, entry: AuditEntry): void {
    scope.auditEntry = entry;
    const res = scope.res;
    const end = res.end;
    const deferredEnd = (...args: unknown[]): ServerResponse => {
      res.end = end;
      const endNow = (): ServerResponse => (end as (...a: unknown[]) => ServerResponse).apply(res, args);
      const stored = this.complete(scope);
      if (stored === undefined) endNow();
      else void stored.then(endNow, endNow);
      return res;
    };
    res.end = deferredEnd as typeof res.end;
  }

  /** An error that is no API error is this server's panic: the request ends in a Panic event. */
  panicked(scope: RequestScope, err: unknown): void {
    const entry = scope.auditEntry;
    // The error's name only: its message may carry anything.
    if (entry) entry.panicked = err instanceof Error ? err.name : 'error';
  }

  /** A watch's ResponseStarted: when its headers go out (upstream's decorated writer). */
  private reportResponseStart(res: ServerResponse, audit: RequestAudit): void {
    const writeHead = res.writeHead;
    const patched = function (this: ServerResponse, ...args: unknown[]): ServerResponse {
      res.writeHead = writeHead;
      const code = typeof args[0] === 'number' ? args[0] : 200;
      if (!audit.event.responseStatus) audit.event.responseStatus = { metadata: {}, code };
      if (!audit.hasProcessed('ResponseStarted')) void audit.process('ResponseStarted');
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    };
    res.writeHead = patched as typeof res.writeHead;
  }

  /** The response is over; its last event, if the end of the response did not store it already. */
  finish(scope: RequestScope): void {
    void this.complete(scope);
  }

  /**
   * The last event: ResponseComplete (or Panic, or the 401's ResponseStarted).
   * Undefined when nothing is left to store, or it was stored at once (the stage is
   * omitted); otherwise settles once the event is stored (or failed to be).
   */
  private complete(scope: RequestScope): Promise<unknown> | undefined {
    const entry = scope.auditEntry;
    if (!entry) return undefined;
    scope.auditEntry = undefined;
    const { audit } = entry;
    if (entry.failedAuthentication || entry.panicked !== undefined || scope.info?.verb === 'watch')
      return this.completeRarely(scope, entry);
    if (!audit.event.responseStatus) audit.event.responseStatus = this.statusOfEnd(scope.res);
    const stored = audit.process('ResponseComplete');
    return stored === true ? undefined : stored;
  }

  /** What the event says of a response whose status no handler recorded. */
  private statusOfEnd(res: ServerResponse): NonNullable<RequestAudit['event']['responseStatus']> {
    return res.headersSent ? { metadata: {}, code: res.statusCode } : { ...CLOSED_EARLY };
  }

  /** complete() for a 401, a panic or a watch. */
  private async completeRarely(scope: RequestScope, entry: AuditEntry): Promise<void> {
    const { audit } = entry;
    const res = scope.res;
    if (entry.failedAuthentication) {
      if (audit.event.responseStatus) audit.event.responseStatus.code = res.statusCode;
      await audit.process('ResponseStarted');
      return;
    }
    if (entry.panicked !== undefined) {
      audit.event.responseStatus = {
        metadata: {},
        status: 'Failure',
        message: `APIServer panic'd: ${entry.panicked}`,
        reason: 'InternalError',
        code: 500,
      };
      await audit.process('Panic');
      return;
    }
    if (scope.info?.verb === 'watch' && !audit.hasProcessed('ResponseStarted')) {
      audit.event.responseStatus ??= { ...CLOSED_EARLY };
      await audit.process('ResponseStarted');
    }
    if (!audit.event.responseStatus) audit.event.responseStatus = this.statusOfEnd(res);
    await audit.process('ResponseComplete');
  }

  /** Flushes the backends (batched events included); called once requests have drained. */
  shutdown(): Promise<void> {
    return this.config.backend.shutdown();
  }
}
