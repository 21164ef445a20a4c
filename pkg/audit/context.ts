// One request's audit event from stage to stage (k8s.io/apiserver pkg/audit
// context.go and request.go): the filter creates it once the policy says the request
// is audited, the handlers add the request and response objects (redacted, see
// redact.ts) and the filter hands a copy of it to the sink at each stage.

import { auditEventTotal } from '../metrics/audit.js';
import { encodeEvent } from './encode.js';
import { microTime, nowEpochMs, responseStatusOf, snapshotEvent } from './event.js';
import type { RequestAuditConfig } from './policy.js';
import { redactObject, redactPatch, withoutManagedFields } from './redact.js';
import { levelAtLeast, type Event, type EventUser, type Stage } from './types.js';

/** Where events go: resolves false when an event could not be stored (blocking-strict fails the request then). */
export interface AuditSink {
  processEvents(events: readonly Event[]): Promise<boolean>;
  /**
   * A sink that writes lines (the log backend, in blocking modes) may take one event
   * as its JSON line (encodeEvent), written from the live event: no snapshot of it.
   */
  processLine?(line: string, auditID: string): Promise<boolean>;
}

/** What the handlers tell the audit of a request; a request that is not audited has none. */
export interface AuditRecorder {
  /** The decoded body of a create or update (or delete options), before defaulting and admission. */
  logRequestObject(obj: unknown): void;
  /** A patch body (`json`, `merge`, `strategic` or `apply`), as decoded. */
  logRequestPatch(patchType: string, patch: unknown): void;
  /** The object or Status the response carries, and its code. */
  logResponseObject(code: number, obj: unknown): void;
  addAnnotation(key: string, value: string): void;
  /** audit.LogImpersonatedUser: who the request is served as, beside the caller in `user`. */
  logImpersonatedUser(user: EventUser): void;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function metadataString(obj: unknown, field: string): string {
  const metadata = isRecord(obj) ? obj['metadata'] : undefined;
  const v = isRecord(metadata) ? metadata[field] : undefined;
  return typeof v === 'string' ? v : '';
}

export class RequestAudit implements AuditRecorder {
  private readonly emitted = new Set<Stage>();

  constructor(
    readonly event: Event,
    readonly config: RequestAuditConfig,
    private readonly sink: AuditSink,
  ) {}

  get level(): RequestAuditConfig['level'] {
    return this.config.level;
  }

  private prepare(obj: unknown): unknown {
    const redacted = redactObject(obj);
    return this.config.omitManagedFields ? withoutManagedFields(redacted) : redacted;
  }

  logRequestObject(obj: unknown): void {
    const ref = this.event.objectRef;
    if (ref) {
      // Fill what the URL did not say (a create names its object in the body).
      ref.namespace ||= metadataString(obj, 'namespace');
      ref.name ||= metadataString(obj, 'name');
      ref.uid ||= metadataString(obj, 'uid');
      ref.resourceVersion ||= metadataString(obj, 'resourceVersion');
    }
    if (!levelAtLeast(this.level, 'Request')) return;
    this.event.requestObject = this.prepare(obj);
  }

  logRequestPatch(patchType: string, patch: unknown): void {
    if (!levelAtLeast(this.level, 'Request')) return;
    const redacted = redactPatch(patchType, patch);
    if (redacted !== undefined) this.event.requestObject = redacted;
  }

  logResponseObject(code: number, obj: unknown): void {
    this.event.responseStatus = responseStatusOf(code, obj);
    if (!levelAtLeast(this.level, 'RequestResponse')) return;
    this.event.responseObject = this.prepare(obj);
  }

  addAnnotation(key: string, value: string): void {
    this.event.annotations ??= {};
    // As upstream: the first value set for a key stays.
    if (!(key in this.event.annotations)) this.event.annotations[key] = value;
  }

  logImpersonatedUser(user: EventUser): void {
    this.event.impersonatedUser = user;
  }

  /** True once `stage` went to the sink (or was omitted by the policy). */
  hasProcessed(stage: Stage): boolean {
    return this.emitted.has(stage);
  }

  /**
   * processAuditEvent: unless the policy omits the stage, stamps it and hands a copy
   * to the sink. False only when the sink could not store it. An omitted stage answers
   * true at once, not as a promise: the chart's default policy omits RequestReceived,
   * and every audited request would otherwise wait a turn for nothing.
   */
  process(stage: Stage): true | Promise<boolean> {
    this.emitted.add(stage);
    if (this.config.omitStages.includes(stage)) return true;
    this.event.stage = stage;
    this.event.stageTimestamp =
      stage === 'RequestReceived' ? this.event.requestReceivedTimestamp : microTime(nowEpochMs());
    auditEventTotal.inc();
    // A sink reports its own failures; one that throws counts as not stored, never as a crash.
    try {
      const stored = this.sink.processLine
        ? this.sink.processLine(encodeEvent(this.event), this.event.auditID)
        : this.sink.processEvents([snapshotEvent(this.event)]);
      return stored.catch(() => false);
    } catch {
      return Promise.resolve(false);
    }
  }
}
